"""A suite as the arms see it: one `Conversation` whose turns are the suite's memories.

Every memory becomes one turn with `dia_id = memory.id`, so anything an arm retrieves
(RAG windows, neuromorphic facts) maps back to memory ids through `source_ids`.
Consecutive memories with the same (session, date) share one dated session; a memory
without a date or session gets its own undated session only when its neighbours differ.
"""

from __future__ import annotations

from bench.suite.model import Memory, Suite, SuiteQuery
from bench.suite.names import safe_file_name
from bench.types import Conversation, Question, Session, Turn

DEFAULT_SPEAKER = "Memory"


def suite_conversation(suite: Suite) -> Conversation:
    """The suite's memories as turns in sessions, and its queries as questions."""
    sessions: list[Session] = []
    group: list[Memory] = []
    for memory in suite.memories:
        if group and _key(group[-1]) != _key(memory):
            sessions.append(_session(len(sessions) + 1, group))
            group = []
        group.append(memory)
    if group:
        sessions.append(_session(len(sessions) + 1, group))
    speakers = tuple(sorted({m.speaker or DEFAULT_SPEAKER for m in suite.memories}))
    conversation_id = safe_file_name(suite.name)  # it names the arms' store folders
    questions = tuple(suite_question(conversation_id, q) for q in suite.queries)
    return Conversation(conversation_id, speakers, tuple(sessions), questions)


def suite_question(conversation_id: str, query: SuiteQuery) -> Question:
    """A query as a pipeline `Question` (relevant ids as evidence)."""
    return Question(
        question_id=query.query_id,
        conversation_id=conversation_id,
        question=query.text,
        category=0,
        gold=query.expected_answer,
        evidence=query.relevant,
        question_type=query.question_type,
        question_date=query.date,
        is_abstention=query.abstention,
    )


def _key(memory: Memory) -> tuple[str | None, str | None]:
    return (memory.session, memory.date)


def _session(index: int, memories: list[Memory]) -> Session:
    turns = tuple(
        Turn(speaker=m.speaker or DEFAULT_SPEAKER, text=m.text, dia_id=m.id, session=index)
        for m in memories
    )
    return Session(index=index, date_time=memories[0].date or "undated", turns=turns)
