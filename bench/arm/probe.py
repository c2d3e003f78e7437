"""Optional arm hooks for retrieval health: the requested k and a post-ingestion probe.

Neither is part of the `Arm` protocol's required methods, so existing arms need no
change:

* `requested_k` (attribute or property, int): how many items `retrieve` asks its
  store for. Without it the hidden-cap rule of bench.scoring.retrieval_health is off.
* `probe_store(conversation) -> StoreProbe | None`: after `ingest`, evidence that the
  conversation was stored — a count the system reports, or a recall of a known
  ingested turn (the live arms search for one). Without it the default reads a count
  the arm already reports in its ingestion stats (the first of `STORED_KEYS` present).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from bench.types import Conversation

log = logging.getLogger("bench.run")

STORED_KEYS = ("stored", "facts", "chunks")
"""Ingestion-stat keys read as "items stored" by the default probe, in this order:
`stored` (any arm may report it), `facts` (extracting arms), `chunks` (rag)."""


@dataclass(frozen=True)
class StoreProbe:
    """What a post-ingestion probe found."""

    stored: int
    """Items stored (a reported count) or recalled for a known ingested turn."""
    method: str
    """`count` (the system reports it) or `recall` (a search for a known turn)."""


@runtime_checkable
class ProbesStore(Protocol):
    """An arm with its own post-ingestion probe."""

    def probe_store(self, conversation: Conversation) -> StoreProbe | None:
        """Evidence the conversation was stored; None when the arm cannot tell."""
        ...


def probe_store(arm: object, conversation: Conversation, stats: object) -> StoreProbe | None:
    """The arm's own probe, else a count from its ingestion `stats`, else None.

    A probe that raises is logged and counts as "not probed": a failed search is no
    evidence that nothing was stored (failed queries are counted separately).
    """
    if isinstance(arm, ProbesStore):
        try:
            return arm.probe_store(conversation)
        except Exception as exc:
            log.warning(
                "probe %s/%s failed: %s: %s",
                getattr(arm, "name", "?"),
                conversation.conversation_id,
                type(exc).__name__,
                exc,
            )
            return None
    counts = stats if isinstance(stats, dict) else {}
    for key in STORED_KEYS:
        value = counts.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return StoreProbe(value, "count")
    return None


def requested_k(arm: object) -> int | None:
    """The arm's `requested_k` when it declares a positive int, else None."""
    value = getattr(arm, "requested_k", None)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None
