"""`python -m bench.published`: see `bench.published.cli`."""

import sys

from bench.cli_errors import exit_status
from bench.published.cli import main

sys.exit(exit_status(main))
