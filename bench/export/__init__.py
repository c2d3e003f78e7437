"""`python -m bench.export`: a run directory in another tool's format (inspect logs)."""
