"""Tests of bench/arm/ (plug-ins, guard, sealed gold, checkpoints, ties)."""
