"""Adapters: read a benchmark's own files into suites.

Each is a module with `load(path: Path, split: str) -> list[Suite]`, named lazily so
only the one used loads; a seeded adapter (`SEEDED`) also takes `seed` (`suite.seed`).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from bench.config import LimitConfig
from bench.errors import ConfigError
from bench.names import did_you_mean, load_symbol
from bench.suite.model import Suite, suite_to_json
from bench.suite.validate import parse_suite

ADAPTERS = {
    "novamem": "bench.suite.adapters.novamem:load",
    "niah": "bench.suite.adapters.novamem:load",
    "beir": "bench.suite.adapters.beir:load",
    "locomo": "bench.suite.adapters.locomo:load",
    "longmemeval": "bench.suite.adapters.longmemeval:load",
    "rag": "bench.suite.adapters.rag:load",
    "beam": "bench.suite.adapters.beam:load",
    "locomo_plus": "bench.suite.adapters.locomo_plus:load",
}
SEEDED = frozenset({"locomo_plus"})
"""Adapters whose suites depend on a seed (LoCoMo-Plus stitching)."""


def load_suites(adapter: str, path: Path, split: str, seed: int | None = None) -> list[Suite]:
    """The suites an adapter reads from `path` (a file or a folder); `seed` if `SEEDED`."""
    if adapter not in ADAPTERS:
        raise ConfigError(
            f"unknown suite adapter '{adapter}' in suite.adapter;"
            f"{did_you_mean(adapter, list(ADAPTERS))} known: {', '.join(sorted(ADAPTERS))}"
        )
    if not path.exists():
        raise ConfigError(f"suite.path={path}: no such file or folder")
    extra = {"seed": seed} if adapter in SEEDED else {}
    suites: list[Suite] = load_symbol(ADAPTERS[adapter])(path, split, **extra)
    if not suites:
        raise ConfigError(f"suite.path={path}: adapter {adapter} found no suite there")
    if adapter not in ("novamem", "niah"):  # those were validated while reading
        suites = [
            parse_suite(suite_to_json(s), where=f"{path} ({adapter} suite {s.name})")
            for s in suites
        ]
    names = [s.name for s in suites]
    if len(set(names)) != len(names):
        raise ConfigError(f"suite.path={path}: two suites share a name; names must differ")
    return suites


def limit_suites(suites: list[Suite], limit: LimitConfig) -> list[Suite]:
    """The suites within `limit` (`LimitConfig.kept`, as `bench.run`); emptied ones dropped."""
    kept = limit.kept([len(s.queries) for s in suites])
    return [replace(s, queries=s.queries[:n]) for s, n in zip(suites, kept, strict=True) if n]
