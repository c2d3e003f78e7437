"""Tests of bench/run/ (end-to-end runs, settings, scale, faults, interrupts)."""
