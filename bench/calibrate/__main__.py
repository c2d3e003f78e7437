"""Entry point of `python -m bench.calibrate [overrides]`."""

from __future__ import annotations

import sys

from bench.calibrate.cli import main


def console() -> None:
    """The `armbench-calibrate` console script (pyproject.toml), as `python -m bench.calibrate`."""
    sys.exit(main(sys.argv[1:]))


if __name__ == "__main__":
    console()
