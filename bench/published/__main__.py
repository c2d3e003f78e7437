"""`python -m bench.published`: see `bench.published.cli`."""

import sys

from bench.published.cli import main

sys.exit(main())
