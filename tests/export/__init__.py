"""Tests of bench/export/ (inspect logs)."""
