"""Tests of bench/published/ (import, merge, verdicts)."""
