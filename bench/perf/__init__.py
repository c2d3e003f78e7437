"""Performance figures as JSON (`python -m bench.perf [groups]`): never asserted in tests."""
