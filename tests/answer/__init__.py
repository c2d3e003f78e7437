"""Tests of bench/answer/ (answer step, context fit, repeats)."""
