"""BEIR folders as a suite: `corpus.jsonl`, `queries.jsonl`, `qrels/<split>.tsv`.

Exactly the files a `beir` download unpacks (nothing here downloads). A document's
memory text is `title. text` (title omitted when empty); a query is kept when its qrels
give it at least one grade > 0, and the integer grades are kept for nDCG.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from bench.errors import DatasetError
from bench.suite.model import Memory, Suite, SuiteQuery
from bench.untrusted import UntrustedJSONError, read_json_lines


def load(path: Path, split: str) -> list[Suite]:
    """The BEIR folder at `path` as one suite named after the folder."""
    corpus = {d["_id"]: d for d in _jsonl(path / "corpus.jsonl", ("_id", "text"))}
    queries = {q["_id"]: q for q in _jsonl(path / "queries.jsonl", ("_id", "text"))}
    qrels = _qrels(path / "qrels" / f"{split}.tsv", corpus, queries)
    memories = tuple(
        Memory(id=str(i), text=_doc_text(d), metadata={"title": str(d.get("title") or "")})
        for i, d in corpus.items()
    )
    suite_queries = tuple(
        SuiteQuery(query_id=str(qid), text=str(queries[qid]["text"]), relevance=grades)
        for qid, grades in qrels.items()
        if any(g > 0 for g in grades.values())
    )
    return [Suite(path.resolve().name, "beir", 1, memories, suite_queries)]


def _doc_text(doc: dict[str, Any]) -> str:
    title = str(doc.get("title") or "").strip()
    text = str(doc["text"]).strip()
    return f"{title}. {text}" if title else text


def _jsonl(path: Path, required: tuple[str, ...]) -> list[dict[str, Any]]:
    if not path.is_file():
        raise DatasetError(f"beir {path}: file missing; point suite.path at a BEIR folder")
    rows = []
    try:
        lines = read_json_lines(path, fix="fix the line")
    except UntrustedJSONError as exc:
        raise DatasetError(f"beir {exc}") from None
    for n, row in lines:
        missing = [k for k in required if not isinstance(row, dict) or k not in row]
        if missing:
            raise DatasetError(f"beir {path}:{n}: missing {missing}; each line needs {required}")
        row["_id"] = str(row["_id"])
        rows.append(row)
    return rows


def _qrels(
    path: Path, corpus: dict[str, Any], queries: dict[str, Any]
) -> dict[str, dict[str, int]]:
    """Query id -> {doc id: grade}; the header line `query-id corpus-id score` is skipped."""
    if not path.is_file():
        raise DatasetError(f"beir {path}: qrels file missing; check suite.split")
    qrels: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8", newline="") as fh:
        for n, row in enumerate(csv.reader(fh, delimiter="\t"), start=1):
            if n == 1 and row and row[0] == "query-id":
                continue
            if len(row) != 3 or not row[2].lstrip("-").isdigit():
                raise DatasetError(f"beir {path}:{n}: expected `query-id<TAB>corpus-id<TAB>score`")
            qid, doc, grade = row[0], row[1], int(row[2])
            if qid not in queries or doc not in corpus:
                what = "query" if qid not in queries else "corpus"
                raise DatasetError(f"beir {path}:{n}: unknown {what} id; qrels must match files")
            qrels.setdefault(qid, {})[doc] = grade
    return {q: {d: g for d, g in grades.items() if g > 0} for q, grades in qrels.items()}
