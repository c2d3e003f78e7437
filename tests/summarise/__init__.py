"""Tests of bench/summarise/ (statistics, views, claims, the CLI)."""
