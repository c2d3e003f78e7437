"""`python -m bench.board`: see `bench.board.cli`."""

import sys

from bench.board.cli import main
from bench.cli_errors import exit_status


def console() -> None:
    """The `armbench-board` console script (pyproject.toml), as `python -m bench.board`."""
    sys.exit(exit_status(main))


if __name__ == "__main__":
    console()
