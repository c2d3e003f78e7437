"""`python -m bench.verify RUN_DIR [--write] [--key K] [--public-key P]` (bench/verify/check.py)."""

import sys

from bench.verify.check import main

sys.exit(main())
