"""The neuromorphic memory engine (methodology §4) and the `neuromorphic`/`tuned` arms.

Public names load lazily, so importing the config class pulls in no store library:
`MemoryEngine` (the reusable memory), `NeuromorphicConfig`, `NeuromorphicArm`,
`Exchange` and `exchanges`.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "MemoryEngine": "arms.neuromorphic.engine",
    "NeuromorphicArm": "arms.neuromorphic.arm",
    "NeuromorphicConfig": "arms.neuromorphic.config",
    "Exchange": "arms.neuromorphic.exchange",
    "exchanges": "arms.neuromorphic.exchange",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'arms.neuromorphic' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
