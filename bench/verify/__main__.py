"""`python -m bench.verify RUN_DIR [--write] [--key K] [--public-key P]` (bench/verify/check.py)."""

import sys

from bench.cli_errors import exit_status
from bench.verify.check import main


def console() -> None:
    """The `armbench-verify` console script (pyproject.toml), as `python -m bench.verify`."""
    sys.exit(exit_status(main))


if __name__ == "__main__":
    console()
