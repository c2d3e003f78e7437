"""Tests of bench/judge/ (LLM judge, official judges, judge runs and migration)."""
