"""Tests of bench/board/."""
