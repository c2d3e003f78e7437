"""Tests of bench/dev/ (developer commands)."""
