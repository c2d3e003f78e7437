"""Tests of bench/calibrate/."""
