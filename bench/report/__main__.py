"""`python -m bench.report RUN_DIR`: report.html, explorer.html, chart PNGs (`page.main`)."""

import sys

from bench.report.page import main

sys.exit(main())
