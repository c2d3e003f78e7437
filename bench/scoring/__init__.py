"""Scoring: the official LoCoMo metrics, the F1 outcome rule and the LLM judges.

Importing this package imports nothing: `bench.summarise` (standard library only) uses
`bench.scoring.rules`, while `locomo` (Porter stemming via nltk) and `judges` load on demand.
"""
