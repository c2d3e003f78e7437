"""Tests of bench/scoring/ (deterministic metrics, health, miss classes)."""
