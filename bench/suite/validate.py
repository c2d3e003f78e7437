"""Suite files in, typed `Suite` out, or one error naming the JSON path of every problem.

Structure is checked against the shipped JSON Schema (jsonschema); the rules a schema
cannot state are checked here: duplicate memory/query ids, references to unknown
memory ids (relevant, forbidden, graded, `supersededBy`), empty texts, and queries with
no relevant memory unless `abstention`. Files are accepted as NovaMem writes them:
`"version": "1"` (a string) or `1`, a query's `category` standing for `questionType`,
and the descriptive `description` and `source` (read, not used).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, cast

from bench.errors import DatasetError
from bench.suite.model import (
    FORMAT_VERSION,
    Memory,
    MemoryJSON,
    QueryJSON,
    Suite,
    SuiteJSON,
    SuiteQuery,
)
from bench.untrusted import MAX_DATASET_BYTES, UntrustedJSONError, read_json

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
        data = read_json(path, limit=MAX_DATASET_BYTES, follow_symlinks=True)
    except UntrustedJSONError as exc:
        raise DatasetError(
            f"suite {path}: not readable JSON ({exc.what}); fix or regenerate it"
        ) from None
    return parse_suite(data, where=str(path))


def parse_suite(data: object, *, where: str) -> Suite:
    """Validate JSON data and build the Suite; raise DatasetError listing every problem."""
    problems = suite_problems(data)
    if problems:
        shown = "; ".join(problems[:MAX_LISTED])
        more = f" (+{len(problems) - MAX_LISTED} more)" if len(problems) > MAX_LISTED else ""
        raise DatasetError(f"suite {where}: {shown}{more}: fix the file (format in docs/suites.md)")
    suite = cast(SuiteJSON, data)  # the schema holds: the file has this shape
    memories = tuple(_memory(m) for m in suite["memories"])
    queries = tuple(_query(q) for q in suite["queries"])
    return Suite(suite["name"], suite["kind"], FORMAT_VERSION, memories, queries)


def suite_problems(data: object) -> list[str]:
    """Every problem as `<json path> <what>`, schema errors first, in document order.

    Data that `conforms` to the schema skips jsonschema (~0.1 ms a memory, most of a
    LoCoMo suite's load); anything else is validated by it, which words the errors.
    """
    if not conforms(data, suite_schema()):
        from jsonschema import Draft202012Validator

        validator = Draft202012Validator(suite_schema())
        errors = sorted(validator.iter_errors(data), key=lambda e: [str(p) for p in e.path])
        if errors:
            return [f"{e.json_path} {e.message}" for e in errors]
    suite = cast(SuiteJSON, data)  # the schema holds: the file has this shape
    return _memory_problems(suite["memories"]) + _query_problems(suite)


_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "boolean": (bool,),
    "null": (type(None),),
    "integer": (int,),
}
_KEYWORDS = frozenset(
    {
        "$schema",
        "$id",
        "title",
        "type",
        "required",
        "additionalProperties",
        "properties",
        "items",
        "pattern",
        "minLength",
        "minimum",
        "const",
        "enum",
    }
)


def conforms(value: object, schema: dict[str, Any]) -> bool:
    """True only when `value` satisfies `schema` (False also for keywords not handled here).

    A strict reading of the keywords the suite schema uses, read from the schema itself
    (one copy of every rule): False sends the data to jsonschema, which has the last word.
    """
    if not _KEYWORDS.issuperset(schema):
        return False
    kinds = schema.get("type")
    if kinds is not None:
        allowed = tuple(
            t for k in ([kinds] if isinstance(kinds, str) else kinds) for t in _TYPES.get(k, ())
        )
        if not isinstance(value, allowed) or (isinstance(value, bool) and bool not in allowed):
            return False
    if "const" in schema and not _same(value, schema["const"]):
        return False
    if "enum" in schema and not any(_same(value, option) for option in schema["enum"]):
        return False
    if isinstance(value, str) and not _string_conforms(value, schema):
        return False
    if "minimum" in schema and not (isinstance(value, int) and value >= schema["minimum"]):
        return False
    if isinstance(value, list) and "items" in schema:
        return all(conforms(item, schema["items"]) for item in value)
    if isinstance(value, dict):
        return _object_conforms(value, schema)
    return True


def _same(value: object, expected: object) -> bool:
    """JSON equality: equal and of one type, so `true` is not `1` and `"1"` is not `1`."""
    return bool(value == expected) and type(value) is type(expected)


def _string_conforms(value: str, schema: dict[str, Any]) -> bool:
    if len(value) < schema.get("minLength", 0):
        return False
    return "pattern" not in schema or _pattern(schema["pattern"]).search(value) is not None


@lru_cache(maxsize=32)
def _pattern(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _object_conforms(value: dict[str, Any], schema: dict[str, Any]) -> bool:
    if any(key not in value for key in schema.get("required", ())):
        return False
    properties = schema.get("properties", {})
    extra = schema.get("additionalProperties", True)
    for key, item in value.items():
        if key in properties:
            ok = conforms(item, properties[key])
        elif isinstance(extra, dict):
            ok = conforms(item, extra)
        else:
            ok = extra is not False
        if not ok:
            return False
    return True


def _memory_problems(memories: list[MemoryJSON]) -> list[str]:
    problems = []
    seen: set[str] = set()
    known = {m["id"] for m in memories}
    for i, memory in enumerate(memories):
        if memory["id"] in seen:
            problems.append(f"$.memories[{i}].id duplicate id {memory['id']!r}")
        seen.add(memory["id"])
        if not memory["text"].strip():
            problems.append(f"$.memories[{i}].text is empty")
        newer = memory.get("supersededBy")
        if newer is not None and newer not in known:
            problems.append(f"$.memories[{i}].supersededBy unknown memory id {newer!r}")
    return problems


def _query_problems(data: SuiteJSON) -> list[str]:
    known = {m["id"] for m in data["memories"]}
    problems = [] if data["queries"] else ["$.queries is empty (a suite needs one query or more)"]
    seen: set[str] = set()
    for i, query in enumerate(data["queries"]):
        at = f"$.queries[{i}]"
        if query["queryId"] in seen:
            problems.append(f"{at}.queryId duplicate id {query['queryId']!r}")
        seen.add(query["queryId"])
        if not query["text"].strip():
            problems.append(f"{at}.text is empty")
        forbidden = query.get("forbiddenMemoryIds", [])
        for key, ids in (
            ("relevantMemoryIds", query["relevantMemoryIds"]),
            ("forbiddenMemoryIds", forbidden),
        ):
            for j, mid in enumerate(ids):
                if mid not in known:
                    problems.append(f"{at}.{key}[{j}] unknown memory id {mid!r}")
        for mid in query.get("relevanceGrades", {}):
            if mid not in known:
                problems.append(f"{at}.relevanceGrades.{mid} unknown memory id {mid!r}")
        if not _relevance(query) and not query.get("abstention", False):
            problems.append(f"{at}.relevantMemoryIds is empty and the query is not an abstention")
    return problems


def _relevance(query: QueryJSON) -> dict[str, int]:
    """Grades: `relevanceGrades` where given, else 1 for every listed relevant id."""
    grades = {mid: 1 for mid in query["relevantMemoryIds"]}
    grades.update(query.get("relevanceGrades", {}))
    return {mid: g for mid, g in grades.items() if g > 0}


def _memory(m: MemoryJSON) -> Memory:
    return Memory(
        m["id"],
        m["text"],
        m.get("date"),
        m.get("session"),
        m.get("speaker"),
        dict(m.get("metadata", {})),
        m.get("supersededBy"),
    )


def _query(q: QueryJSON) -> SuiteQuery:
    return SuiteQuery(
        query_id=q["queryId"],
        text=q["text"],
        relevance=_relevance(q),
        forbidden=tuple(q.get("forbiddenMemoryIds", [])),
        expected_answer=q.get("expectedAnswer"),
        question_type=q.get("questionType", q.get("category")),
        date=q.get("date"),
        abstention=bool(q.get("abstention", False)),
    )
