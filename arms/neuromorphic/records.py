"""Memory records and tiers: what extractors propose, the archive keeps and recall returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from functools import lru_cache
from typing import Any

import numpy as np


class Tier(IntEnum):
    """Memory tiers; each has its own decay rate (CoreAnchor never decays)."""

    CORE = 0
    ACTIVE = 1
    EPHEMERAL = 2

    @property
    def label(self) -> str:
        """The tier's name as extractors and renderings spell it."""
        return _LABELS[self]


_LABELS = {Tier.CORE: "CoreAnchor", Tier.ACTIVE: "ActiveContext", Tier.EPHEMERAL: "EphemeralState"}
_BY_NAME = {
    **{label.lower(): tier for tier, label in _LABELS.items()},
    "core": Tier.CORE,
    "active": Tier.ACTIVE,
    "ephemeral": Tier.EPHEMERAL,
}


def parse_tier(name: str) -> Tier | None:
    """`CoreAnchor` / `core` → Tier.CORE etc. (case-insensitive); None when unknown."""
    return _BY_NAME.get(name.strip().lower().replace("_", ""))


@lru_cache(maxsize=100_000)
def entity_key(name: str) -> str:
    """The matching key of an entity name: case-folded, whitespace collapsed."""
    return " ".join(name.casefold().split())


@dataclass(frozen=True)
class FactDraft:
    """A fact proposed by an extractor, before it is stored."""

    entity_name: str
    fact_content: str
    memory_type: Tier
    overrides_entity: str | None = None
    related_entities: tuple[str, ...] = ()
    valid_date: str | None = None
    """When the fact became true, as a date text; None means the exchange's session date."""
    source_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class FactRow:
    """An archived fact: immutable, appended once to the cold archive."""

    id: int
    turn: int
    entity_name: str
    fact_content: str
    tier: Tier
    related: tuple[str, ...]
    valid_date: str
    source_ids: tuple[str, ...]
    embedding: np.ndarray = field(repr=False, compare=False)


@dataclass(frozen=True)
class Fact:
    """A record as seen from outside the engine (recall results, history)."""

    id: int
    entity_name: str
    fact_content: str
    memory_type: Tier
    weight: float
    k: int
    created_at_turn: int
    last_reinforced_turn: int
    related_entities: tuple[str, ...]
    valid_at: int
    invalid_at: int | None
    valid_date: str
    invalid_date: str | None
    source_ids: tuple[str, ...]
    invalid_reason: str | None = None
    in_hot: bool = True


@dataclass(frozen=True)
class Recalled:
    """One recalled fact with its fused score and the lists that found it."""

    fact: Fact
    score: float
    found_by: tuple[str, ...]


@dataclass(frozen=True)
class Event:
    """One entry of the append-only event log (state is a fold over live events)."""

    seq: int
    turn: int
    kind: str
    payload: dict[str, Any]
