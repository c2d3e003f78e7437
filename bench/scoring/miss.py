"""Retrieval miss vs reader miss, and turn/session-level recall, from run records.

Standard library only, so the summariser (stdlib-only) can import it. Works on the
record dicts `bench.run` writes: `evidence` (gold turn ids), and per arm `status`,
`correct` and `retrieved_ids` (source turn ids, best first).

- A wrong answer is a **retrieval miss** when none of its evidence turns was retrieved,
  a **reader miss** when at least one was (the answerer had evidence and still failed).
  Unclassified (None): correct answers, questions without evidence, and results that
  list no source ids (failed results; records older than `ArmResult.miss` from raw,
  whose whole-transcript context lists none). `bench.run` stores the kind per result
  (`ArmResult.miss`, from the context's ranked source ids, or raw's kept turns); the
  counts prefer it and compute it only for records written before it existed.
- turn recall@K    = |evidence ∩ top-K retrieved turns| / |evidence|
- session recall@K = |sessions(evidence) ∩ sessions(top-K retrieved)| / |sessions(evidence)|,
  a turn's session being its id before the last `:` (LoCoMo `D3:5` -> `D3`,
  LongMemEval `<session id>:<n>` -> `<session id>`); the two granularities published
  memory-recall claims use.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from bench.records import Miss

RETRIEVAL_MISS: Final = "retrieval"
READER_MISS: Final = "reader"


def evidence_retrieved(evidence: Sequence[str], retrieved: Sequence[str]) -> bool | None:
    """True when any evidence id was retrieved; None without evidence or retrieved ids."""
    if not evidence or not retrieved:
        return None
    return not set(evidence).isdisjoint(retrieved)


def miss_from(found: bool | None, correct: bool | None) -> Miss | None:
    """The miss kind of an answer whose context did (`found`) or did not hold evidence."""
    if correct is not False or found is None:
        return None
    return READER_MISS if found else RETRIEVAL_MISS


def classify_miss(
    evidence: Sequence[str], retrieved: Sequence[str], correct: bool | None
) -> Miss | None:
    """`retrieval`, `reader`, or None when the answer is right or it cannot be told."""
    return miss_from(evidence_retrieved(evidence, retrieved), correct)


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


def result_miss(
    evidence: Sequence[str],
    retrieved: Sequence[str],
    correct: bool | None,
    found: bool | None,
    stored: str | None,
) -> Miss | None:
    """The stored miss when the record has one (`found` set), else computed from ids.

    Records written before `ArmResult.miss` existed carry neither field; for them the
    miss is computed from `retrieved_ids`, which a whole-context arm (raw) leaves empty.
    """
    if found is not None:
        return READER_MISS if stored == READER_MISS else RETRIEVAL_MISS if stored else None
    return classify_miss(evidence, retrieved, correct)


MissRow = tuple[str, str, "Miss | None"]
"""(arm, category, miss kind) of one ok result."""


def count_misses(rows: Iterable[MissRow]) -> dict[str, dict[str, dict[str, int]]]:
    """{arm: {category: {"retrieval": n, "reader": n}}}; categories in first-seen order."""
    counts: dict[str, dict[str, dict[str, int]]] = {}
    for arm, category, kind in rows:
        if kind is None:
            continue
        by_cat = counts.setdefault(arm, {})
        cell = by_cat.get(category)
        if cell is None:
            cell = by_cat[category] = {RETRIEVAL_MISS: 0, READER_MISS: 0}
        cell[kind] += 1
    return counts


def miss_counts(records: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, dict[str, int]]]:
    """`count_misses` over record dicts (ok results only), categories sorted."""
    rows: list[MissRow] = [
        (
            arm,
            str(record.get("question_type") or record.get("category")),
            result_miss(
                record.get("evidence") or [],
                result.get("retrieved_ids") or [],
                result.get("correct"),
                result.get("evidence_retrieved"),
                result.get("miss"),
            ),
        )
        for record in records
        for arm, result in record.get("arms", {}).items()
        if result.get("status") == "ok"
    ]
    return {a: dict(sorted(c.items())) for a, c in count_misses(rows).items()}


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
