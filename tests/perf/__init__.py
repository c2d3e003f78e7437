"""Tests of bench/perf/."""
