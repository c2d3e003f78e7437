"""The suite format itself (NovaMem-style).

One suite file, or a folder of `*.json` suites read in name order. NIAH suites written by
bench.suite.niah use the same format.
"""

from __future__ import annotations

from pathlib import Path

from bench.suite.model import Suite
from bench.suite.validate import load_suite


def load(path: Path, split: str) -> list[Suite]:
    """Every suite at `path` (`split` is unused by this format)."""
    files = sorted(path.glob("*.json")) if path.is_dir() else [path]
    return [load_suite(f) for f in files]
