"""Tests of bench/remote/ (s3:// run folders)."""
