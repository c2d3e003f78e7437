"""Suite files in, typed `Suite` out, or one error naming the JSON path of every problem.

Structure is checked against the shipped JSON Schema (jsonschema); the rules a schema
cannot state are checked here: duplicate memory/query ids, references to unknown
memory ids, empty texts, and queries with no relevant memory unless `abstention`.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from bench.errors import DatasetError
from bench.suite.model import Memory, Suite, SuiteQuery

MAX_LISTED = 5
"""Problems spelled out in the one-line error; the rest are counted."""


@lru_cache(maxsize=1)
def suite_schema() -> dict[str, Any]:
    """The JSON Schema shipped with the package (`bench/suite/suite.schema.json`)."""
    text = resources.files("bench.suite").joinpath("suite.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def load_suite(path: Path) -> Suite:
    """Read and validate one suite file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DatasetError(
            f"suite {path}: not readable JSON ({exc}); fix or regenerate it"
        ) from None
    return parse_suite(data, where=str(path))


def parse_suite(data: Any, *, where: str) -> Suite:
    """Validate JSON data and build the Suite; raise DatasetError listing every problem."""
    problems = suite_problems(data)
    if problems:
        shown = "; ".join(problems[:MAX_LISTED])
        more = f" (+{len(problems) - MAX_LISTED} more)" if len(problems) > MAX_LISTED else ""
        raise DatasetError(f"suite {where}: {shown}{more}: fix the file (format in docs/suites.md)")
    memories = tuple(_memory(m) for m in data["memories"])
    queries = tuple(_query(q) for q in data["queries"])
    return Suite(data["name"], data["kind"], data["version"], memories, queries)


def suite_problems(data: Any) -> list[str]:
    """Every problem as `<json path> <what>`, schema errors first, in document order."""
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(suite_schema())
    errors = sorted(validator.iter_errors(data), key=lambda e: [str(p) for p in e.path])
    if errors:
        return [f"{e.json_path} {e.message}" for e in errors]
    return _memory_problems(data["memories"]) + _query_problems(data)


def _memory_problems(memories: list[dict[str, Any]]) -> list[str]:
    problems = []
    seen: set[str] = set()
    for i, memory in enumerate(memories):
        if memory["id"] in seen:
            problems.append(f"$.memories[{i}].id duplicate id {memory['id']!r}")
        seen.add(memory["id"])
        if not memory["text"].strip():
            problems.append(f"$.memories[{i}].text is empty")
    return problems


def _query_problems(data: dict[str, Any]) -> list[str]:
    known = {m["id"] for m in data["memories"]}
    problems = []
    seen: set[str] = set()
    for i, query in enumerate(data["queries"]):
        at = f"$.queries[{i}]"
        if query["queryId"] in seen:
            problems.append(f"{at}.queryId duplicate id {query['queryId']!r}")
        seen.add(query["queryId"])
        if not query["text"].strip():
            problems.append(f"{at}.text is empty")
        for key in ("relevantMemoryIds", "forbiddenMemoryIds"):
            for j, mid in enumerate(query.get(key, [])):
                if mid not in known:
                    problems.append(f"{at}.{key}[{j}] unknown memory id {mid!r}")
        for mid in query.get("relevanceGrades", {}):
            if mid not in known:
                problems.append(f"{at}.relevanceGrades.{mid} unknown memory id {mid!r}")
        if not _relevance(query) and not query.get("abstention", False):
            problems.append(f"{at}.relevantMemoryIds is empty and the query is not an abstention")
    return problems


def _relevance(query: dict[str, Any]) -> dict[str, int]:
    """Grades: `relevanceGrades` where given, else 1 for every listed relevant id."""
    grades = {mid: 1 for mid in query["relevantMemoryIds"]}
    grades.update(query.get("relevanceGrades", {}))
    return {mid: g for mid, g in grades.items() if g > 0}


def _memory(m: dict[str, Any]) -> Memory:
    return Memory(
        m["id"],
        m["text"],
        m.get("date"),
        m.get("session"),
        m.get("speaker"),
        dict(m.get("metadata", {})),
    )


def _query(q: dict[str, Any]) -> SuiteQuery:
    return SuiteQuery(
        query_id=q["queryId"],
        text=q["text"],
        relevance=_relevance(q),
        forbidden=tuple(q.get("forbiddenMemoryIds", [])),
        expected_answer=q.get("expectedAnswer"),
        question_type=q.get("questionType"),
        date=q.get("date"),
        abstention=bool(q.get("abstention", False)),
    )
