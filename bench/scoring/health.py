"""Extraction health: did a memory arm's extractor actually store anything?

An arm whose extractor fails on every exchange still answers every question (from an
empty store), so its accuracy alone reads as a clean run. Each arm that extracts reports
`exchanges`, `exchanges_failed` and `facts` (stored) in its ingestion stats; this module
turns them into one `Health` per arm and conversation, and calls an arm *degraded* when
(with exchanges > 0)

    failed / exchanges > MAX_FAILED_SHARE   or   facts == 0
    or  duplicate / facts > MAX_DUPLICATE_SHARE   or   ungrounded / facts > MAX_UNGROUNDED_SHARE

where `duplicate` counts facts repeating an earlier fact of the same exchange and
`ungrounded` facts whose content words mostly do not occur in the exchange (both counted
by the LLM extractor, `arms/neuromorphic/grounding.py`; 0 for rule-based extraction).

Degraded arms end the run with a loud warning and exit 1 (bench.run), and the summary
marks their results. Standard library only (the summariser reads it too).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MAX_FAILED_SHARE = 0.10
"""Above this share of failed exchanges an arm's extraction is degraded."""
MAX_DUPLICATE_SHARE = 0.25
"""Above this share of stored facts repeated within their exchange, extraction is degraded."""
MAX_UNGROUNDED_SHARE = 0.25
"""Above this share of stored facts not grounded in their exchange, extraction is degraded."""


@dataclass(frozen=True)
class Health:
    """One arm's extraction over one conversation."""

    exchanges: int
    """Exchanges the extractor was asked about."""
    failed: int
    """Exchanges whose extraction had an error (failed call, no tool call, bad JSON, ...)."""
    facts: int
    """Facts in the store after ingestion."""
    via_tools: int = 0
    """Exchanges asked with an `update_memory` tool call (LLM extractor)."""
    via_json_schema: int = 0
    """Exchanges asked as JSON constrained by a JSON Schema (LLM extractor)."""
    tools_ignored: int = 0
    """Tool requests the server answered with free text and no tool call."""
    duplicate: int = 0
    """Facts repeating an earlier fact of the same exchange."""
    ungrounded: int = 0
    """Facts whose content words mostly do not occur in their exchange."""

    @property
    def mode(self) -> str:
        """Which extraction mode was used: `tools`, `json_schema`, `tools+json_schema`, or ``."""
        used = [
            m for m, n in (("tools", self.via_tools), ("json_schema", self.via_json_schema)) if n
        ]
        return "+".join(used)

    @property
    def degraded(self) -> bool:
        """True when too many exchanges failed, nothing was stored or too many facts are suspect."""
        if self.exchanges <= 0:
            return False
        if self.failed / self.exchanges > MAX_FAILED_SHARE or self.facts == 0:
            return True
        return (
            self.duplicate / self.facts > MAX_DUPLICATE_SHARE
            or self.ungrounded / self.facts > MAX_UNGROUNDED_SHARE
        )

    def to_json(self) -> dict[str, int]:
        """The plain form kept in records and run.json (mode and quality counts when set)."""
        out = {"exchanges": self.exchanges, "failed": self.failed, "facts": self.facts}
        modes = {k: getattr(self, k) for k in _MODE_KEYS}
        out = out | modes if any(modes.values()) else out
        return out | {k: n for k in _QUALITY_KEYS if (n := getattr(self, k))}


_MODE_KEYS = ("via_tools", "via_json_schema", "tools_ignored")
_QUALITY_KEYS = ("duplicate", "ungrounded")
_STATS_QUALITY = ("facts_duplicate", "facts_ungrounded")
"""The engine's counter names of `_QUALITY_KEYS`."""


def _ints(data: dict[str, Any], keys: tuple[str, ...]) -> list[int] | None:
    """The values of `keys` when each is an int (0 when absent from `data`)."""
    values = [data.get(k, 0) for k in keys]
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return None
    return values


def from_stats(stats: dict[str, Any]) -> Health | None:
    """The health in an arm's ingestion stats, None when the arm does not extract."""
    if "exchanges_failed" not in stats:
        return None
    values = [stats.get(k) for k in ("exchanges", "exchanges_failed", "facts")]
    modes, quality = _ints(stats, _MODE_KEYS), _ints(stats, _STATS_QUALITY)
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in values) or modes is None:
        return None
    return Health(*values, *modes, *(quality or (0, 0)))  # type: ignore[arg-type]


def from_json(data: Any) -> Health | None:
    """A `Health` from its plain form, None when it is not one."""
    if not isinstance(data, dict):
        return None
    values = [data.get(k) for k in ("exchanges", "failed", "facts")]
    modes, quality = _ints(data, _MODE_KEYS), _ints(data, _QUALITY_KEYS)
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in values) or modes is None:
        return None
    return Health(*values, *modes, *(quality or (0, 0)))  # type: ignore[arg-type]


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
        *(
            sum(getattr(h, k) for h in rows)
            for k in ("exchanges", "failed", "facts", *_MODE_KEYS, *_QUALITY_KEYS)
        )
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
                    f"{h.exchanges} exchanges failed, {h.facts} facts stored{quality_note(h)}"
                    f"{mode_note(h)}"
                )
    return lines


def mode_note(h: Health) -> str:
    """`` for rule-based extraction, else `; via tools+json_schema (tools ignored 3×)`."""
    if not h.mode:
        return ""
    ignored = f" (tools ignored {h.tools_ignored}×)" if h.tools_ignored else ""
    return f"; via {h.mode}{ignored}"


def quality_note(h: Health) -> str:
    """`` when no fact is suspect, else `, 4 duplicate, 2 ungrounded` (the nonzero ones)."""
    parts = [f"{n} {k}" for k in _QUALITY_KEYS if (n := getattr(h, k))]
    return "".join(f", {p}" for p in parts)
