"""Servers, stubs and helpers shared by the tests (no tests here)."""
