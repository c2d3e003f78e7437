"""`python -m bench.summarise RUN_DIR [--baseline RUN_DIR] [--json] [--labels ...] [--write]`.

The process runs with the cyclic garbage collector off: it is one-shot, and what it
builds (parsed JSON, records, the summary) holds no reference cycles, so collections
would only rescan the records (a fifth of the summariser's time on a full run). On
success it ends without freeing the records (`cli._exit_unfreed`).
"""

import gc
import sys

from bench.summarise.cli import main

gc.disable()
sys.exit(main(exit_unfreed=True))
