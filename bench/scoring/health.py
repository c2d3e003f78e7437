"""Extraction health: did a memory arm's extractor actually store anything?

An arm whose extractor fails on every exchange still answers every question (from an
empty store), so its accuracy alone reads as a clean run. Each arm that extracts reports
`exchanges`, `exchanges_failed` and `facts` (stored) in its ingestion stats; this module
turns them into one `Health` (kept in bench.result_parts, where records can import it) per arm
and conversation, and calls an arm *degraded* when (with exchanges > 0)

    failed / exchanges > MAX_FAILED_SHARE   or   facts == 0
    or  duplicate / facts > MAX_DUPLICATE_SHARE   or   ungrounded / facts > MAX_UNGROUNDED_SHARE

where `duplicate` counts facts repeating an earlier fact of the same exchange and
`ungrounded` facts whose content words mostly do not occur in the exchange (both counted
by the LLM extractor, `arms/neuromorphic/grounding.py`; 0 for rule-based extraction).

Degraded arms end the run with a loud warning and exit 1 (bench.run), and the summary
marks their results. Standard library only (the summariser reads it too).
"""

from __future__ import annotations

from typing import Any

from bench.result_parts import (
    MODE_KEYS,
    QUALITY_KEYS,
    Health,
    health_from,
    health_from_json,
)

_STATS_QUALITY = ("facts_duplicate", "facts_ungrounded")
"""The engine's counter names of `QUALITY_KEYS`."""


def from_stats(stats: dict[str, Any]) -> Health | None:
    """The health in an arm's ingestion stats, None when the arm does not extract."""
    if "exchanges_failed" not in stats:
        return None
    return health_from(stats, ("exchanges", "exchanges_failed", "facts"), _STATS_QUALITY)


HealthTable = dict[str, dict[str, Health]]
"""arm -> conversation id -> health."""


def table_from_json(data: Any) -> HealthTable:
    """The `extraction_health` object of run.json, ill-formed entries skipped."""
    table: HealthTable = {}
    for arm, per_conv in (data or {}).items() if isinstance(data, dict) else []:
        rows = per_conv.items() if isinstance(per_conv, dict) else []
        parsed = {str(cid): h for cid, raw in rows if (h := health_from_json(raw)) is not None}
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
            for k in ("exchanges", "failed", "facts", *MODE_KEYS, *QUALITY_KEYS)
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
    parts = [f"{n} {k}" for k in QUALITY_KEYS if (n := getattr(h, k))]
    return "".join(f", {p}" for p in parts)
