"""The `python -m bench.screen` command; the screens themselves are `bench/suite/screen.py`."""
