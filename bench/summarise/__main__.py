"""`python -m bench.summarise RUN_DIR [--baseline RUN_DIR] [--json] [--labels ...] [--write]`."""

import sys

from bench.summarise.cli import main

sys.exit(main())
