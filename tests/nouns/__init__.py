"""Tests of the shared nouns: bench/*.py (records, untrusted, files, tokens, ...)."""
