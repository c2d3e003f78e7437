"""Tests of bench/cleanup/."""
