"""`python -m bench.published`: see `bench.published.cli`."""

import sys

from bench.cli_errors import exit_status
from bench.published.cli import main


def console() -> None:
    """The `armbench-published` console script (pyproject.toml), as `python -m bench.published`."""
    sys.exit(exit_status(main))


if __name__ == "__main__":
    console()
