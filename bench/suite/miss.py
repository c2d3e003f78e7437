"""Retrieval miss vs reader miss, and turn/session-level recall, from run records.

Standard library only, so the summariser (stdlib-only) can import it. Works on the
record dicts `bench.run` writes: `evidence` (gold turn ids), and per arm `status`,
`correct` and `retrieved_ids` (source turn ids, best first).

- A wrong answer is a **retrieval miss** when none of its evidence turns was retrieved,
  a **reader miss** when at least one was (the answerer had evidence and still failed).
  Unclassified (None): correct answers, questions without evidence, and arms that list
  no retrieved ids (raw puts the whole transcript in context; failed results).
- turn recall@K    = |evidence ∩ top-K retrieved turns| / |evidence|
- session recall@K = |sessions(evidence) ∩ sessions(top-K retrieved)| / |sessions(evidence)|,
  a turn's session being its id before the last `:` (LoCoMo `D3:5` -> `D3`,
  LongMemEval `<session id>:<n>` -> `<session id>`); the two granularities published
  memory-recall claims use.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

RETRIEVAL_MISS = "retrieval"
READER_MISS = "reader"


def classify_miss(
    evidence: Sequence[str], retrieved: Sequence[str], correct: bool | None
) -> str | None:
    """`retrieval`, `reader`, or None when the answer is right or it cannot be told."""
    if correct is not False or not evidence or not retrieved:
        return None
    return READER_MISS if set(evidence) & set(retrieved) else RETRIEVAL_MISS


def session_of(turn_id: str) -> str:
    """The session part of a turn id (everything before the last `:`)."""
    return turn_id.rsplit(":", 1)[0]


def turn_recall(evidence: Sequence[str], retrieved: Sequence[str], k: int) -> float | None:
    """|evidence ∩ top-k retrieved| / |evidence|; None without evidence or retrieved ids."""
    if not evidence or not retrieved:
        return None
    gold = set(evidence)
    return len(gold & set(retrieved[:k])) / len(gold)


def session_recall(evidence: Sequence[str], retrieved: Sequence[str], k: int) -> float | None:
    """Share of the evidence's sessions with at least one turn in the top k retrieved."""
    if not evidence or not retrieved:
        return None
    gold = {session_of(e) for e in evidence}
    return len(gold & {session_of(r) for r in retrieved[:k]}) / len(gold)


def miss_counts(records: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, dict[str, int]]]:
    """{arm: {category: {"retrieval": n, "reader": n}}} over ok results; keys sorted."""
    counts: dict[str, dict[str, dict[str, int]]] = {}
    for record in records:
        category = str(record.get("question_type") or record.get("category"))
        for arm, result in record.get("arms", {}).items():
            if result.get("status") != "ok":
                continue
            kind = classify_miss(
                record.get("evidence") or [],
                result.get("retrieved_ids") or [],
                result.get("correct"),
            )
            if kind is None:
                continue
            cell = counts.setdefault(arm, {}).setdefault(
                category, {RETRIEVAL_MISS: 0, READER_MISS: 0}
            )
            cell[kind] += 1
    return {a: dict(sorted(c.items())) for a, c in counts.items()}


def miss_table(records: Iterable[Mapping[str, Any]]) -> list[str]:
    """Markdown lines: retrieval vs reader misses per arm and category (empty if none)."""
    counts = miss_counts(records)
    if not counts:
        return []
    lines = ["| arm | category | retrieval misses | reader misses |", "|---|---|---:|---:|"]
    for arm, by_category in counts.items():
        for category, cell in by_category.items():
            lines.append(f"| {arm} | {category} | {cell[RETRIEVAL_MISS]} | {cell[READER_MISS]} |")
    return lines
