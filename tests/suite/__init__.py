"""Tests of bench/suite/ and bench/screen/ (recall suites, adapters, metrics)."""
