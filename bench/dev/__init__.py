"""Developer commands, apart from the harness: `python -m bench.dev.llm_smoke` (make llm-smoke)."""
