"""Dataset loaders: find the file (`resolve`), parse it (`locomo`, `longmemeval`), count it.

The runner calls `load_dataset(cfg)`; everything it returns is a typed `bench.types.Dataset`.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from pathlib import Path

from bench.config import DatasetConfig
from bench.errors import ConfigError
from bench.loaders.locomo import load_locomo
from bench.loaders.longmemeval import load_longmemeval
from bench.loaders.resolve import resolve_data_file, sha256_file
from bench.loaders.stats import dataset_stats
from bench.types import Dataset

LOADERS: dict[str, Callable[[Path, str], Dataset]] = {
    "locomo": load_locomo,
    "longmemeval": load_longmemeval,
}
"""`dataset.loader` name → parser of a local file."""


def load_dataset(cfg: DatasetConfig) -> Dataset:
    """Resolve (and if needed download) the configured file, then parse it."""
    loader = LOADERS.get(cfg.loader)
    if loader is None:
        close = difflib.get_close_matches(cfg.loader, LOADERS, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise ConfigError(
            f"dataset.loader={cfg.loader!r} is unknown; {hint}known loaders: {', '.join(LOADERS)}"
        )
    return loader(resolve_data_file(cfg), cfg.name)


__all__ = [
    "LOADERS",
    "dataset_stats",
    "load_dataset",
    "load_locomo",
    "load_longmemeval",
    "resolve_data_file",
    "sha256_file",
]
