"""`python -m bench.summarise RUN_DIR [--baseline RUN_DIR] [--json] [--labels ...] [--write]`.

The process runs with the cyclic garbage collector off: it is one-shot, and what it
builds (parsed JSON, records, the summary) holds no reference cycles, so collections
would only rescan the records already read (issue 28: 4% of the command's instructions).
"""

import gc
import sys

from bench.cli_errors import exit_status
from bench.summarise.cli import main


def console() -> None:
    """The `armbench-summarise` console script (pyproject.toml), as `python -m bench.summarise`."""
    gc.disable()
    sys.exit(exit_status(main))


if __name__ == "__main__":
    console()
