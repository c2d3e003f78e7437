"""armbench: a reproducible, paired benchmark harness for conversational memory.

Importing `bench` pulls in no heavy dependency; arms and providers load lazily
through `bench.registry`.
"""

__version__ = "0.1.0"
