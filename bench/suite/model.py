"""The suite format (version 1): memories, queries and their relevance judgements.

A suite is the unit of a recall benchmark: every memory becomes one retrievable unit
with its own id (and date), every query names the memories that answer it
(`relevantMemoryIds`, optionally graded) and the stale ones that must not come back
(`forbiddenMemoryIds`). The JSON shape is fixed by `suite.schema.json` beside this
module; `bench.suite.validate` turns JSON into these dataclasses or names every problem.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NotRequired, TypedDict

FORMAT_VERSION = 1
KNOWN_KINDS = ("longmemeval", "locomo", "beir", "rag", "long-context", "supersession")
"""Kinds the project ships adapters for; any other non-empty kind is accepted as-is."""


@dataclass(frozen=True)
class Memory:
    """One retrievable unit (a turn, a document, a fact) with its own id."""

    id: str
    """The memory's id, unique in the suite; what rankings and judgements name."""
    text: str
    """The memory's text, as written to the arm."""
    date: str | None = None
    """When it was said or written (free-form date string); None when undated."""
    session: str | None = None
    """The session it belongs to; consecutive memories sharing one are grouped."""
    speaker: str | None = None
    """Who said it; None for documents and facts."""
    metadata: dict[str, str] = field(default_factory=dict)
    """Extra string fields carried through unchanged."""
    superseded_by: str | None = None
    """The id of the memory that replaces this one (NovaMem's `supersededBy`); None if current."""


@dataclass(frozen=True)
class SuiteQuery:
    """One query and its judgements.

    `relevance` maps each relevant memory id to its grade (1 for binary suites;
    BEIR qrels keep their integer grades for nDCG). Abstention queries have none.
    """

    query_id: str
    """The query's id, unique in the suite."""
    text: str
    """The query (question) text."""
    relevance: dict[str, int]
    """Relevant memory id -> grade (1 when binary); empty for abstention queries."""
    forbidden: tuple[str, ...] = ()
    """Stale memory ids that must not be retrieved (forbidden hit@K)."""
    expected_answer: str | None = None
    """The gold answer, when the suite has one (scored when answering)."""
    question_type: str | None = None
    """The source's question type or category, for per-type breakdowns."""
    date: str | None = None
    """When the query is asked (free-form date string); None when undated."""
    abstention: bool = False
    """True when the query has no answer in the memories (none are relevant)."""

    @property
    def relevant(self) -> tuple[str, ...]:
        """Ids with a positive grade, in the order the suite lists them."""
        return tuple(mid for mid, grade in self.relevance.items() if grade > 0)


@dataclass(frozen=True)
class Suite:
    """A whole suite: name, kind, format version, memories and queries."""

    name: str
    """The suite's name; unique among the suites of a run."""
    kind: str
    """The kind of source: one of `KNOWN_KINDS` or any other non-empty name."""
    version: int
    """The suite format version (`FORMAT_VERSION`; a file's `"1"` is read as 1)."""
    memories: tuple[Memory, ...]
    """Every retrievable memory, in order."""
    queries: tuple[SuiteQuery, ...]
    """Every query, in order."""


class MemoryJSON(TypedDict):
    """A memory as the suite file holds it (`suite.schema.json`)."""

    id: str
    text: str
    date: NotRequired[str | None]
    session: NotRequired[str | None]
    speaker: NotRequired[str | None]
    metadata: NotRequired[dict[str, str]]
    supersededBy: NotRequired[str | None]


class QueryJSON(TypedDict):
    """A query as the suite file holds it (`suite.schema.json`)."""

    queryId: str
    text: str
    relevantMemoryIds: list[str]
    forbiddenMemoryIds: NotRequired[list[str]]
    relevanceGrades: NotRequired[dict[str, int]]
    expectedAnswer: NotRequired[str | None]
    questionType: NotRequired[str | None]
    category: NotRequired[str | None]
    date: NotRequired[str | None]
    abstention: NotRequired[bool]


class SuiteJSON(TypedDict):
    """A suite file (`suite.schema.json`); `version` may be written `"1"`."""

    name: str
    kind: str
    version: int | str
    memories: list[MemoryJSON]
    queries: list[QueryJSON]


def suite_to_json(suite: Suite) -> dict[str, object]:
    """The suite in its JSON file shape (inverse of `validate.parse_suite`)."""
    return {
        "name": suite.name,
        "kind": suite.kind,
        "version": suite.version,
        "memories": [_memory_json(m) for m in suite.memories],
        "queries": [_query_json(q) for q in suite.queries],
    }


def _memory_json(m: Memory) -> dict[str, object]:
    out: dict[str, object] = {"id": m.id, "text": m.text}
    for key, value in (("date", m.date), ("session", m.session), ("speaker", m.speaker)):
        if value is not None:
            out[key] = value
    if m.metadata:
        out["metadata"] = dict(m.metadata)
    if m.superseded_by is not None:
        out["supersededBy"] = m.superseded_by
    return out


def _query_json(q: SuiteQuery) -> dict[str, object]:
    out: dict[str, object] = {
        "queryId": q.query_id,
        "text": q.text,
        "relevantMemoryIds": list(q.relevant),
        "forbiddenMemoryIds": list(q.forbidden),
    }
    if any(grade != 1 for grade in q.relevance.values()):
        out["relevanceGrades"] = dict(q.relevance)
    optional = (("expectedAnswer", q.expected_answer), ("questionType", q.question_type))
    for key, value in (*optional, ("date", q.date)):
        if value is not None:
            out[key] = value
    if q.abstention:
        out["abstention"] = True
    return out
