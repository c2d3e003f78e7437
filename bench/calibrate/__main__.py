"""Entry point of `python -m bench.calibrate [overrides]`."""

from __future__ import annotations

import sys

from bench.calibrate.cli import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
