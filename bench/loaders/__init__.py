"""Dataset loaders: find the file (`resolve`), parse it (`locomo`, `longmemeval`), count it.

BEAM (a tier folder) and LoCoMo-Plus (items stitched into LoCoMo with a seed) find their
own sources from the whole `DatasetConfig` (`SOURCE_LOADERS`).

The runner calls `load_dataset(cfg)`; everything it returns is a typed `bench.types.Dataset`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from bench.config import DatasetConfig
from bench.loaders.beam_hub import load_beam_config
from bench.loaders.errata import AUTO, apply_errata, errata_file
from bench.loaders.locomo import load_locomo
from bench.loaders.locomo_plus import load_locomo_plus_config
from bench.loaders.longmemeval import load_longmemeval
from bench.loaders.resolve import resolve_data_file, resolve_source, sha256_file
from bench.loaders.stats import dataset_stats
from bench.names import unknown
from bench.types import Dataset

log = logging.getLogger(__name__)

LOADERS: dict[str, Callable[[Path, str], Dataset]] = {
    "locomo": load_locomo,
    "longmemeval": load_longmemeval,
}
"""`dataset.loader` name → parser of a local file."""

SOURCE_LOADERS: dict[str, Callable[[DatasetConfig], Dataset]] = {
    "beam": load_beam_config,
    "locomo_plus": load_locomo_plus_config,
}
"""`dataset.loader` name → loader that resolves its own sources (a folder, two files)."""


def load_dataset(cfg: DatasetConfig) -> Dataset:
    """Resolve (and if needed download) the configured file, then parse it."""
    if cfg.loader in SOURCE_LOADERS:
        return SOURCE_LOADERS[cfg.loader](cfg)
    loader = LOADERS.get(cfg.loader)
    if loader is None:
        raise unknown("loader", cfg.loader, [*LOADERS, *SOURCE_LOADERS], "dataset.loader")
    path, hub = resolve_source(cfg)
    dataset = replace(loader(path, cfg.name), hub=hub)
    if cfg.errata == AUTO and cfg.sha256 and dataset.sha256 != cfg.sha256:
        log.warning(
            "dataset.errata=auto: %s is not the canonical LoCoMo file the audit describes; "
            "scoring against its own key only (pass dataset.errata=<path> to force an audit)",
            dataset.path,
        )
        return dataset
    errata = errata_file(cfg.errata, cfg.loader)
    return dataset if errata is None else apply_errata(dataset, errata)


__all__ = [
    "LOADERS",
    "SOURCE_LOADERS",
    "dataset_stats",
    "load_dataset",
    "load_locomo",
    "load_longmemeval",
    "resolve_data_file",
    "sha256_file",
]
