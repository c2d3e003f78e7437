"""`python -m bench.board`: see `bench.board.cli`."""

import sys

from bench.board.cli import main
from bench.cli_errors import exit_status

sys.exit(exit_status(main))
