"""Tests of bench/quick/ (`armbench run` flags)."""
