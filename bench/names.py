"""Names users type: the did-you-mean error for an unknown one, and lazy `module:attr` symbols.

Every setting that picks an implementation by name (arm kinds, loaders, providers,
suite adapters, perf groups) refuses an unknown name with `unknown`; implementations
named `module:attribute` load on first use with `load_symbol`.
"""

from __future__ import annotations

import difflib
import importlib
from typing import Any

from bench.errors import ConfigError


def did_you_mean(name: str, known: list[str]) -> str:
    """` did you mean 'x'?` for the closest known name, or '' when none is close."""
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.5)
    return f" did you mean '{close[0]}'?" if close else ""


def unknown(kind: str, name: str, known: list[str], setting: str) -> ConfigError:
    """The one-line error for an unknown name in a setting."""
    return ConfigError(
        f"unknown {kind} '{name}' in {setting};{did_you_mean(name, known)} "
        f"known: {', '.join(sorted(known))}"
    )


def load_symbol(path: str) -> Any:
    """Import `module:attribute` lazily (`module:Class.attribute` reads an attribute of it)."""
    module, _, attribute = path.partition(":")
    value = importlib.import_module(module)
    for part in attribute.split("."):
        value = getattr(value, part)
    return value
