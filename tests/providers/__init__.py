"""Tests of bench/providers/ (chat and embedding providers, offline models)."""
