"""TREC run and qrels files, so any IR tool (trec_eval, pytrec_eval, ranx) can re-score.

Run line: `qid Q0 docid rank score tag`. trec_eval re-sorts by score (ties by docid),
so the score written is `depth - rank + 1`: strictly decreasing in rank, which keeps
the arm's order exactly. Qrels line: `qid 0 docid grade`.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from bench.files import write_text_atomic


def run_lines(rows: Iterable[tuple[str, tuple[str, ...]]], tag: str) -> list[str]:
    """TREC run lines for (query id, ranked doc ids) pairs."""
    lines = []
    for qid, ranked in rows:
        depth = len(ranked)
        for rank, doc in enumerate(ranked, start=1):
            lines.append(f"{qid} Q0 {doc} {rank} {depth - rank + 1} {tag}")
    return lines


def qrels_lines(rows: Iterable[tuple[str, dict[str, int]]]) -> list[str]:
    """TREC qrels lines for (query id, {doc id: grade}) pairs."""
    return [f"{qid} 0 {doc} {grade}" for qid, grades in rows for doc, grade in grades.items()]


def write_lines(path: Path, lines: list[str]) -> None:
    """Write lines atomically, newline-terminated."""
    write_text_atomic(path, "".join(f"{line}\n" for line in lines))


def read_run(path: Path) -> dict[str, dict[str, float]]:
    """A TREC run as {qid: {docid: score}} (the shape pytrec_eval takes)."""
    run: dict[str, dict[str, float]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        qid, _, doc, _, score, _ = line.split()
        run.setdefault(qid, {})[doc] = float(score)
    return run
