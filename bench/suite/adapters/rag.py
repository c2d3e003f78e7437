"""Documents with question/answer pairs in the SQuAD (v1.1/v2.0) JSON format as a suite.

Every paragraph (`context`) is a memory with id `<article index>-<paragraph index>`;
every question is a query whose relevant id is its paragraph and whose expected answer
is its first answer text. SQuAD 2.0 `is_impossible` questions are abstentions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.errors import DatasetError
from bench.suite.model import Memory, Suite, SuiteQuery
from bench.untrusted import MAX_DATASET_BYTES, read_json


def load(path: Path, split: str) -> list[Suite]:
    """The SQuAD-format file at `path` as one suite (`split` is unused)."""
    try:
        data = read_json(path, limit=MAX_DATASET_BYTES, follow_symlinks=True)
        articles = data["data"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise DatasetError(
            f"rag {path}: not a SQuAD-format file ({exc}); need {{'data': [...]}}"
        ) from None
    memories: list[Memory] = []
    queries: list[SuiteQuery] = []
    for a, article in enumerate(articles):
        for p, paragraph in enumerate(_field(article, "paragraphs", f"{path} data[{a}]")):
            mid = f"{a}-{p}"
            where = f"{path} data[{a}].paragraphs[{p}]"
            title = str(article.get("title", ""))
            memories.append(
                Memory(mid, str(_field(paragraph, "context", where)), metadata={"title": title})
            )
            queries.extend(
                _query(q, mid, f"{where}.qas[{i}]")
                for i, q in enumerate(_field(paragraph, "qas", where))
            )
    return [Suite(path.stem, "rag", 1, tuple(memories), tuple(queries))]


def _query(qa: Any, mid: str, where: str) -> SuiteQuery:
    impossible = bool(qa.get("is_impossible", False)) if isinstance(qa, dict) else False
    answers = _field(qa, "answers", where) if not impossible else []
    return SuiteQuery(
        query_id=str(_field(qa, "id", where)),
        text=str(_field(qa, "question", where)),
        relevance={} if impossible else {mid: 1},
        expected_answer=str(answers[0]["text"]) if answers else None,
        abstention=impossible,
    )


def _field(obj: Any, key: str, where: str) -> Any:
    if not isinstance(obj, dict) or key not in obj:
        raise DatasetError(f"rag {where}: missing '{key}'; expected the SQuAD layout")
    return obj[key]
