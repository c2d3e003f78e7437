"""`python -m bench.report RUN_DIR`: report.html, explorer.html, chart PNGs (`page.main`)."""

import sys

from bench.cli_errors import exit_status
from bench.report.page import main


def console() -> None:
    """The `armbench-report` console script (pyproject.toml), as `python -m bench.report`."""
    sys.exit(exit_status(main))


if __name__ == "__main__":
    console()
