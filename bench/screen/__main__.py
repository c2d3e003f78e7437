"""`python -m bench.screen [overrides]`: retrieval-only screens (bench/suite/screen.py)."""

from bench.suite.screen import main

main()
