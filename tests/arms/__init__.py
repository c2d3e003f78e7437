"""Tests of arms/ (raw, rag, the neuromorphic engine, library and live arms)."""
