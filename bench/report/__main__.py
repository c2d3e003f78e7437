"""`python -m bench.report RUN_DIR`: report.html, explorer.html, chart PNGs (`page.main`)."""

import sys

from bench.cli_errors import exit_status
from bench.report.page import main

sys.exit(exit_status(main))
