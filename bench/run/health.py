"""Extraction health: did a memory arm's extractor actually store anything?

An arm whose extractor fails on every exchange still answers every question (from an
empty store), so its accuracy alone reads as a clean run. Each arm that extracts reports
`exchanges`, `exchanges_failed` and `facts` (stored) in its ingestion stats; this module
turns them into one `Health` per arm and conversation, and calls an arm *degraded* when

    failed / exchanges > MAX_FAILED_SHARE   or   facts == 0 (with exchanges > 0).

Degraded arms end the run with a loud warning and exit 1 (bench.run), and the summary
marks their results. Standard library only (the summariser reads it too).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MAX_FAILED_SHARE = 0.10
"""Above this share of failed exchanges an arm's extraction is degraded."""


@dataclass(frozen=True)
class Health:
    """One arm's extraction over one conversation."""

    exchanges: int
    """Exchanges the extractor was asked about."""
    failed: int
    """Exchanges whose extraction had an error (failed call, no tool call, bad JSON, ...)."""
    facts: int
    """Facts in the store after ingestion."""

    @property
    def degraded(self) -> bool:
        """True when too many exchanges failed or nothing was stored."""
        if self.exchanges <= 0:
            return False
        return self.failed / self.exchanges > MAX_FAILED_SHARE or self.facts == 0

    def to_json(self) -> dict[str, int]:
        """The plain form kept in records and run.json."""
        return {"exchanges": self.exchanges, "failed": self.failed, "facts": self.facts}


def from_stats(stats: dict[str, Any]) -> Health | None:
    """The health in an arm's ingestion stats, None when the arm does not extract."""
    if "exchanges_failed" not in stats:
        return None
    values = [stats.get(k) for k in ("exchanges", "exchanges_failed", "facts")]
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return None
    return Health(*values)  # type: ignore[arg-type]


def from_json(data: Any) -> Health | None:
    """A `Health` from its plain form, None when it is not one."""
    if not isinstance(data, dict):
        return None
    values = [data.get(k) for k in ("exchanges", "failed", "facts")]
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return None
    return Health(*values)  # type: ignore[arg-type]


HealthTable = dict[str, dict[str, Health]]
"""arm -> conversation id -> health."""


def table_from_json(data: Any) -> HealthTable:
    """The `extraction_health` object of run.json, ill-formed entries skipped."""
    table: HealthTable = {}
    for arm, per_conv in (data or {}).items() if isinstance(data, dict) else []:
        rows = per_conv.items() if isinstance(per_conv, dict) else []
        parsed = {str(cid): h for cid, raw in rows if (h := from_json(raw)) is not None}
        if parsed:
            table[str(arm)] = parsed
    return table


def table_to_json(table: HealthTable) -> dict[str, dict[str, dict[str, int]]]:
    """The plain form of a table, arms and conversations in sorted order."""
    return {
        arm: {cid: table[arm][cid].to_json() for cid in sorted(table[arm])} for arm in sorted(table)
    }


def arm_total(per_conv: dict[str, Health]) -> Health:
    """One arm's health summed over its conversations."""
    rows = per_conv.values()
    return Health(
        sum(h.exchanges for h in rows), sum(h.failed for h in rows), sum(h.facts for h in rows)
    )


def degraded_warnings(table: HealthTable) -> list[str]:
    """One line per degraded arm and conversation, with the numbers (stable order)."""
    lines = []
    for arm in sorted(table):
        for cid in sorted(table[arm]):
            h = table[arm][cid]
            if h.degraded:
                lines.append(
                    f"arm {arm} conversation {cid}: extraction degraded — {h.failed} of "
                    f"{h.exchanges} exchanges failed, {h.facts} facts stored"
                )
    return lines
