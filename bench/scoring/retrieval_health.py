"""Retrieval health: did an arm's retrieval return what it was asked for?

A memory service that silently caps every search, stores nothing or times out still
yields a context for every question (an empty or short one), so its accuracy alone
reads as a clean run. Per arm and unit (conversation) the run counts:

* `queries` retrievals attempted, `failed` of them raised (`timed_out` of those timed
  out), `empty` returned no item and no text;
* `items`: how many items each successful query returned (count -> queries);
* `requested_k`: the k the arm asked for (`Arm.requested_k`, None when it has none);
* `units` turns ingested and `stored`: the post-ingestion probe (bench/arm/probe.py), a
  count the arm reports (`probe = count`) or the items a recall of a known ingested turn
  returned (`probe = recall`); None when the arm was not probed.

An arm is *degraded* on a unit, with the thresholds of extraction health
(bench.result_parts.MAX_FAILED_SHARE), when

    failed / queries > MAX_FAILED_SHARE   or   empty / queries > MAX_FAILED_SHARE
    or stored == 0 (probed)               or   a hidden cap (below).

A *hidden cap* is probable when at least MIN_CAP_QUERIES successful queries all returned
the same count c with 0 < c < requested_k and c < the stored bound (`stored` for a count
probe, else `units`): the service had more to give and was asked for more, yet never
returned more. Degraded arms end the run with a loud warning and exit 1, and the summary
marks them, exactly as extraction health does. Standard library only (the summariser
reads it too).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from bench.result_parts import MAX_FAILED_SHARE, QueryHealth

MIN_CAP_QUERIES = 5
"""Fewest successful queries on one unit before a constant count is called a cap."""
TIMEOUT_WORDS = ("timeout", "timed out")
"""A failed retrieval whose `Type: message` holds one of these (any case) timed out."""
CAUSES = (
    ("failed", "over {share} of queries failed (each record says why: a timeout, a hung "
     "service, a reply from another namespace, a missing prediction)"),
    ("empty", "over {share} of contexts empty"),
    ("cap", "a probable hidden cap on results (a limit the service documents: set "
     "arm_options.<arm>.k to it)"),
    ("stored", "a post-ingestion probe that found nothing stored"),
)  # fmt: skip
"""Why an arm/unit pair is degraded, by rule of `RetrievalHealth.problems`, as the run's
closing `error:` line says it."""


@dataclass(frozen=True)
class RetrievalHealth:
    """One arm's retrieval over one unit (summed over sessions of a resumed run)."""

    queries: int = 0
    """Retrievals behind the results that stand (a query redone on resume replaces the
    earlier one: `retracted`)."""
    failed: int = 0
    """Retrievals that raised (ingestion failures are not counted here)."""
    timed_out: int = 0
    """Failed retrievals whose error names a timeout."""
    empty: int = 0
    """Successful retrievals with no item and an empty context text."""
    items: dict[int, int] = field(default_factory=dict)
    """Items returned by a successful query -> how many queries returned that many."""
    requested_k: int | None = None
    """The k the arm asked for per query; None when the arm has no such setting."""
    units: int | None = None
    """Turns ingested into the arm for this unit; None when not known."""
    stored: int | None = None
    """The post-ingestion probe's count; None when the arm was not probed."""
    probe: str = ""
    """How `stored` was found: `count` (the arm reports it) or `recall`; `` when unprobed."""

    def cap(self) -> int | None:
        """The probable hidden cap c (see the module docstring), or None."""
        ok = sum(self.items.values())
        if len(self.items) != 1 or ok < MIN_CAP_QUERIES or self.requested_k is None:
            return None
        (count,) = self.items
        bound = self.stored if self.probe == "count" else self.units
        if count <= 0 or count >= self.requested_k or (bound is not None and count >= bound):
            return None
        return count

    def broken(self) -> list[str]:
        """The rules this arm breaks on this unit, as keys of `CAUSES` (none: healthy)."""
        rules = {
            "failed": bool(self.queries) and self.failed / self.queries > MAX_FAILED_SHARE,
            "empty": bool(self.queries) and self.empty / self.queries > MAX_FAILED_SHARE,
            "cap": self.cap() is not None,
            "stored": self.stored == 0,
        }
        return [key for key, _ in CAUSES if rules[key]]

    def problems(self) -> list[str]:
        """Why this arm is degraded on this unit, one phrase per rule broken (none: healthy)."""
        phrases = {
            "failed": lambda: f"{self.failed} of {self.queries} queries failed "
                              f"({self.timed_out} timed out)",
            "empty": lambda: f"{self.empty} of {self.queries} contexts empty",
            "cap": lambda: f"probable hidden cap: all {sum(self.items.values())} queries "
                           f"returned exactly {self.cap()} items, k={self.requested_k} asked, "
                           f"{self.bound_note()}",
            "stored": lambda: f"post-ingestion probe ({self.probe}) found nothing stored",
        }  # fmt: skip
        return [phrases[key]() for key in self.broken()]

    def bound_note(self) -> str:
        """`26 turns ingested` or `40 items stored`: what the service could have returned."""
        if self.probe == "count" and self.stored is not None:
            return f"{self.stored} items stored"
        return f"{self.units} turns ingested" if self.units is not None else "store size unknown"

    @property
    def degraded(self) -> bool:
        """True when any rule of `problems` is broken."""
        return bool(self.problems())

    def add(self, other: RetrievalHealth) -> RetrievalHealth:
        """This session's counts added to an earlier one's; the latest probe and k win."""
        items = dict(self.items)
        for count, n in other.items.items():
            items[count] = items.get(count, 0) + n
        items = {count: n for count, n in items.items() if n}  # a retracted query leaves none
        return RetrievalHealth(
            self.queries + other.queries,
            self.failed + other.failed,
            self.timed_out + other.timed_out,
            self.empty + other.empty,
            items,
            other.requested_k if other.requested_k is not None else self.requested_k,
            other.units if other.units is not None else self.units,
            *((other.stored, other.probe) if other.probe else (self.stored, self.probe)),
        )

    def to_json(self) -> dict[str, Any]:
        """The plain form kept in run.json (unset optional values omitted)."""
        out: dict[str, Any] = {
            "queries": self.queries,
            "failed": self.failed,
            "timed_out": self.timed_out,
            "empty": self.empty,
            "items": {str(k): self.items[k] for k in sorted(self.items)},
        }
        optional = {"requested_k": self.requested_k, "units": self.units, "stored": self.stored}
        out.update({k: v for k, v in optional.items() if v is not None})
        return out | ({"probe": self.probe} if self.probe else {})


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def from_json(data: Any) -> RetrievalHealth | None:
    """A `RetrievalHealth` from its plain form, None when it is not one."""
    if not isinstance(data, dict):
        return None
    counts = [data.get(k, 0) for k in ("queries", "failed", "timed_out", "empty")]
    optional = [data.get(k) for k in ("requested_k", "units", "stored")]
    raw_items = data.get("items", {})
    if not all(map(_int, counts)) or not all(v is None or _int(v) for v in optional):
        return None
    if not isinstance(raw_items, dict) or not all(
        str(k).isdigit() and _int(v) for k, v in raw_items.items()
    ):
        return None
    items = {int(k): v for k, v in raw_items.items()}
    probe = data.get("probe", "")
    queries, failed, timed_out, empty = counts
    requested_k, units, stored = optional
    return RetrievalHealth(
        queries,
        failed,
        timed_out,
        empty,
        items,
        requested_k,
        units,
        stored,
        probe if isinstance(probe, str) else "",
    )


def query_result(items: int, empty: bool) -> RetrievalHealth:
    """One successful query returning `items` items (`empty`: no item and no text)."""
    return RetrievalHealth(queries=1, empty=int(empty), items={items: 1})


def retracted(query: QueryHealth) -> RetrievalHealth:
    """The negative of one query a record holds (`ArmResult.retrieval`), to take it back.

    A result redone on resume (a failed retrieval retried) replaces the earlier query, so
    the run's health counts the queries behind the results that stand, and a resumed run
    that completes its retries is healthy again.
    """
    return RetrievalHealth(
        queries=-1,
        failed=-query.failed,
        timed_out=-query.timed_out,
        empty=-query.empty,
        items={} if query.failed else {query.items: -1},
    )


def query_failure(error: str) -> RetrievalHealth:
    """One failed query; `error` is its `Type: message` line."""
    timed_out = any(word in error.lower() for word in TIMEOUT_WORDS)
    return RetrievalHealth(queries=1, failed=1, timed_out=int(timed_out))


RetrievalTable = dict[str, dict[str, RetrievalHealth]]
"""arm -> unit (conversation) id -> retrieval health."""


def add_to(table: RetrievalTable, arm: str, unit: str, got: RetrievalHealth) -> None:
    """Add `got` to `table[arm][unit]` (created when absent)."""
    per_unit = table.setdefault(arm, {})
    per_unit[unit] = per_unit[unit].add(got) if unit in per_unit else got


def merge(table: RetrievalTable, other: RetrievalTable) -> None:
    """Add every entry of `other` (a worker unit's, this session's) into `table`."""
    for arm, per_unit in other.items():
        for unit, got in per_unit.items():
            add_to(table, arm, unit, got)


def table_from_json(data: Any) -> RetrievalTable:
    """The `retrieval_health` object of run.json, ill-formed entries skipped."""
    table: RetrievalTable = {}
    for arm, per_unit in data.items() if isinstance(data, dict) else []:
        rows = per_unit.items() if isinstance(per_unit, dict) else []
        parsed = {str(uid): h for uid, raw in rows if (h := from_json(raw)) is not None}
        if parsed:
            table[str(arm)] = parsed
    return table


def table_to_json(table: RetrievalTable) -> dict[str, dict[str, dict[str, Any]]]:
    """The plain form of a table, arms and units in sorted order."""
    return {a: {u: table[a][u].to_json() for u in sorted(table[a])} for a in sorted(table)}


def arm_total(per_unit: dict[str, RetrievalHealth]) -> RetrievalHealth:
    """One arm's counts summed over its units (probe and cap rules stay per unit)."""
    total = RetrievalHealth()
    for got in per_unit.values():
        total = total.add(replace(got, stored=None, probe="", units=None))
    return total


def distribution(items: dict[int, int]) -> str:
    """`3×13` or `4×2, 7×1`: items returned × queries, by item count."""
    return ", ".join(f"{k}×{items[k]}" for k in sorted(items)) or "none"


def degraded_warnings(table: RetrievalTable) -> list[str]:
    """One line per degraded arm and unit, with the numbers (stable order)."""
    return [
        f"arm {arm} unit {unit}: retrieval degraded — {'; '.join(got.problems())}"
        for arm in sorted(table)
        for unit, got in sorted(table[arm].items())
        if got.degraded
    ]


def causes(table: RetrievalTable) -> list[str]:
    """The causes (`CAUSES`) behind the degraded pairs of `table`, each once, in order.

    Only the rules actually broken are named, so a run degraded by failed queries (a
    hung search, a cross-namespace reply) never reads as a hidden cap.
    """
    found = {
        key for per_unit in table.values() for got in per_unit.values() for key in got.broken()
    }
    share = f"{MAX_FAILED_SHARE:.0%}"
    return [text.format(share=share) for key, text in CAUSES if key in found]


def summary_notes(data: Any) -> list[str]:
    """Closing notes of the summary: one line per arm, then DEGRADED lines per unit.

    `data` is run.json's `retrieval_health` object (ill-formed entries skipped).
    """
    table, notes = table_from_json(data), []
    for arm in sorted(table):
        total = arm_total(table[arm])
        mark = "DEGRADED " if any(g.degraded for g in table[arm].values()) else ""
        probes = [g.stored for g in table[arm].values() if g.probe]
        stored = f", probe stored {sum(p or 0 for p in probes)}" if probes else ", not probed"
        notes.append(
            f"{mark}retrieval {arm}: {total.queries} queries, {total.failed} failed "
            f"({total.timed_out} timed out), {total.empty} empty; items per query "
            f"{distribution(total.items)} (k={total.requested_k or 'n/a'}){stored}"
        )
    notes.extend(f"DEGRADED results: {line}" for line in degraded_warnings(table))
    return notes
