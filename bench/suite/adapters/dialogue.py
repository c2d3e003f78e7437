"""Dialogue datasets (LoCoMo, LongMemEval) as suites: every turn is a memory.

A memory's id is the turn's dia_id, its date the session date, its session the session
index; a query's relevant ids are its evidence turns. Evidence naming a turn that does
not exist is dropped (LoCoMo's key has a few); a non-abstention query left with no
evidence is skipped and counted in the suite name's log line, never scored as a miss.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from bench.suite.model import Memory, Suite, SuiteQuery
from bench.types import Conversation, Question

log = logging.getLogger("bench.suite")

Evidence = Callable[[Question, Conversation], tuple[str, ...]]


def conversation_suite(
    conversation: Conversation,
    kind: str,
    evidence: Evidence,
    qtype: Callable[[Question], str],
    abstains: Callable[[Question], bool] = lambda q: q.is_abstention,
) -> Suite:
    """The conversation's turns as memories and its questions as queries."""
    memories = tuple(
        Memory(
            id=turn.dia_id,
            text=turn.render().split(": ", 1)[-1],
            date=session.date_time,
            session=str(session.index),
            speaker=turn.speaker,
        )
        for session in conversation.sessions
        for turn in session.turns
    )
    known = {m.id for m in memories}
    queries = []
    skipped = 0
    for question in conversation.questions:
        relevant = tuple(dict.fromkeys(e for e in evidence(question, conversation) if e in known))
        abstention = abstains(question)
        if not relevant and not abstention:
            skipped += 1
            continue
        queries.append(
            SuiteQuery(
                query_id=question.question_id,
                text=question.question,
                relevance={mid: 1 for mid in relevant},
                expected_answer=None if question.gold is None else str(question.gold),
                question_type=qtype(question),
                date=question.question_date,
                abstention=abstention,
            )
        )
    if skipped:
        log.info(
            "suite %s: %d queries without usable evidence skipped",
            conversation.conversation_id,
            skipped,
        )
    return Suite(conversation.conversation_id, kind, 1, memories, tuple(queries))
