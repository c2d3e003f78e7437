"""`python -m bench.proxy`: the accounting proxy (bench/providers/proxy.py) on its own."""
