"""LongMemEval (`longmemeval_s.json` shape) as suites: one suite per question haystack.

Relevant ids are the `has_answer: true` turns; a question whose file marks no such turn
(session-level evidence only) gets every turn of its `answer_session_ids` instead.
`_abs` questions are abstentions. Types are LongMemEval's `question_type`.
"""

from __future__ import annotations

from pathlib import Path

from bench.errors import DatasetError
from bench.loaders import load_longmemeval
from bench.suite.adapters.dialogue import conversation_suite
from bench.suite.model import Suite
from bench.types import Conversation, Question
from bench.untrusted import MAX_DATASET_BYTES, read_json


def load(path: Path, split: str) -> list[Suite]:
    """Every question's haystack as a suite (`split` is unused)."""
    dataset = load_longmemeval(path)
    answer_sessions = _answer_sessions(path)

    def evidence(question: Question, conversation: Conversation) -> tuple[str, ...]:
        if question.evidence or question.is_abstention:
            return question.evidence
        wanted = answer_sessions.get(question.question_id, set())
        return tuple(t.dia_id for t in conversation.turns() if t.dia_id.rsplit(":", 1)[0] in wanted)

    return [
        conversation_suite(c, "longmemeval", evidence, lambda q: q.question_type or "unknown")
        for c in dataset.conversations
    ]


def _answer_sessions(path: Path) -> dict[str, set[str]]:
    """question_id -> answer_session_ids, read from the file the loader already checked."""
    try:
        items = read_json(path, limit=MAX_DATASET_BYTES, follow_symlinks=True)
        return {
            str(i["question_id"]): set(map(str, i.get("answer_session_ids", []))) for i in items
        }
    except (OSError, ValueError, TypeError, KeyError) as exc:
        raise DatasetError(f"longmemeval {path}: answer_session_ids unreadable ({exc})") from None
