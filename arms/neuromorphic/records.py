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
    """The entity the fact is about."""
    fact_content: str
    """The fact as one sentence."""
    memory_type: Tier
    """Proposed tier (CoreAnchor, ActiveContext or EphemeralState), which sets λ_tier."""
    overrides_entity: str | None = None
    """Entity whose current fact this one supersedes; None means none."""
    related_entities: tuple[str, ...] = ()
    """Other entities linked to it (edges for spreading activation)."""
    valid_date: str | None = None
    """When the fact became true, as a date text; None means the exchange's session date."""
    source_ids: tuple[str, ...] = ()
    """Dia_ids of the turns the fact came from."""


@dataclass(frozen=True)
class FactRow:
    """An archived fact: immutable, appended once to the cold archive."""

    id: int
    """Fact id."""
    turn: int
    """Exchange (turn) it was archived at."""
    entity_name: str
    """The entity the fact is about."""
    fact_content: str
    """The fact text."""
    tier: Tier
    """Tier the fact was stored in."""
    related: tuple[str, ...]
    """Related entity names."""
    valid_date: str
    """Date text from which the fact holds."""
    source_ids: tuple[str, ...]
    """Dia_ids of the source turns."""
    embedding: np.ndarray = field(repr=False, compare=False)
    """Embedding of `fact_content`, for dense cold search."""


@dataclass(frozen=True, slots=True)
class Fact:
    """A record as seen from outside the engine (recall results, history)."""

    id: int
    """Fact id."""
    entity_name: str
    """The entity the fact is about."""
    fact_content: str
    """The fact text."""
    memory_type: Tier
    """Current tier; sets λ_tier in w·exp(−λ_tier·exp(−η·k)·Δt)."""
    weight: float
    """Current weight w (decayed from w_r)."""
    k: int
    """Reinforcement count (the k in exp(−η·k))."""
    created_at_turn: int
    """Exchange at which the fact was inserted."""
    last_reinforced_turn: int
    """Exchange of the last reinforcement; Δt counts from here."""
    related_entities: tuple[str, ...]
    """Linked entities (edges for spreading activation)."""
    valid_at: int
    """Exchange from which the fact is valid."""
    invalid_at: int | None
    """Exchange at which it was superseded or pruned; None while valid (its weight freezes here)."""
    valid_date: str
    """Date text from which the fact holds."""
    invalid_date: str | None
    """Date text at which it stopped holding; None while valid."""
    source_ids: tuple[str, ...]
    """Dia_ids of the source turns."""
    invalid_reason: str | None = None
    """Why it became invalid: `superseded` or `pruned`; None while valid."""
    in_hot: bool = True
    """True while the fact is in the hot store (False: cold archive only)."""


@dataclass(frozen=True)
class Recalled:
    """One recalled fact with its fused score and the lists that found it."""

    fact: Fact
    """The recalled fact."""
    score: float
    """Its fused retrieval score (RRF when `rrf` is on)."""
    found_by: tuple[str, ...]
    """The lists that found it: `hot`, `graph`, `cold`."""


@dataclass(frozen=True)
class Event:
    """One entry of the append-only event log (state is a fold over live events)."""

    seq: int
    """Position in the event log (increasing)."""
    turn: int
    """Exchange the event happened at."""
    kind: str
    """Event type name."""
    payload: dict[str, Any]
    """Event-specific data (JSON-serialisable)."""
