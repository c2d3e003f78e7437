"""The one explicit, lazy name table of arm implementations.

Importing this module imports no arm: each entry names `module:attribute` strings
that load on first use. An unknown name fails with "did you mean".
"""

from __future__ import annotations

import difflib
import importlib
from dataclasses import dataclass
from typing import Any

from bench.errors import ConfigError


@dataclass(frozen=True)
class ArmKind:
    """Where an arm implementation and its config dataclass live."""

    implementation: str
    """`module:Class` of the arm implementation, imported lazily."""
    config: str
    """`module:Class` of the arm's config dataclass."""


ARM_KINDS: dict[str, ArmKind] = {
    "raw": ArmKind("arms.raw:RawArm", "arms.raw:RawConfig"),
    "rag": ArmKind("arms.rag:RagArm", "arms.rag:RagConfig"),
    "neuromorphic": ArmKind(
        "arms.neuromorphic.arm:NeuromorphicArm", "arms.neuromorphic.config:NeuromorphicConfig"
    ),
    "http": ArmKind("arms.http:HttpArm", "arms.http:HttpConfig"),
    "mcp": ArmKind("arms.mcp:McpArm", "arms.mcp:McpConfig"),
}


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
    """Import `module:attribute` lazily."""
    module, _, attribute = path.partition(":")
    return getattr(importlib.import_module(module), attribute)


def arm_kind(kind: str, setting: str) -> ArmKind:
    """The implementation entry for an arm kind, or a did-you-mean error."""
    if kind not in ARM_KINDS:
        raise unknown("arm kind", kind, list(ARM_KINDS), setting)
    return ARM_KINDS[kind]
