"""armbench: a reproducible, paired benchmark harness for conversational memory.

Importing `bench` pulls in no heavy dependency; arms and providers load lazily
through `bench.arm.registry`.
"""

__version__ = "0.2.0"

import os as _os

# LanceDB logs a WARN line for every table it creates; keep its log to real errors.
_os.environ.setdefault("LANCEDB_LOG", "error")
