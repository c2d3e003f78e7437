"""Scoring: the deterministic metrics, the F1 outcome rule and the judge-run arithmetic.

Importing this package imports nothing: `bench.summarise` (standard library only) uses
`bench.scoring.rules` and `judge_runs`, while `locomo` (Porter stemming via nltk) loads on
demand. The LLM judges are `bench.judge`.
"""
