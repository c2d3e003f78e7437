"""Tests of bench/proxy/ (the accounting proxy)."""
