"""LongMemEval loader (methodology §2): `longmemeval_{s,m,oracle}.json` and its format.

Each question brings its own haystack, so each becomes its own Conversation
(`conversation_id = question_id`) holding exactly one Question: arms ingest per question,
isolated. Session i (1-based, haystack order) takes `haystack_dates[i]` as its date;
a turn's speaker is its `role` (`user` / `assistant`) and its `dia_id` is
`<haystack_session_id>:<1-based turn index>`. Evidence is the dia_ids of turns marked
`has_answer: true`. Abstention is the `_abs` suffix on `question_id`, not a type.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.loaders.check import FileChecker
from bench.loaders.semantics import load_conversations
from bench.types import Conversation, Dataset, Question, Session, Turn

LONGMEMEVAL_CATEGORIES: dict[int, str] = {
    1: "single-session-user",
    2: "single-session-assistant",
    3: "single-session-preference",
    4: "multi-session",
    5: "knowledge-update",
    6: "temporal-reasoning",
}
"""Integer category per `question_type`, in the order of the LongMemEval paper's table."""

CATEGORY_OF_TYPE = {label: code for code, label in LONGMEMEVAL_CATEGORIES.items()}
SPEAKERS = ("user", "assistant")
_FIX = "fix the file, or point dataset.path / BENCH_DATA_DIR at a valid LongMemEval-format file"


def load_longmemeval(path: Path, name: str = "longmemeval") -> Dataset:
    """Load a LongMemEval-format file: one isolated Conversation per question."""
    return load_conversations(FileChecker(path, _FIX), name, "questions", "question_id", _instance)


def _instance(check: FileChecker, item: Any, where: str) -> Conversation:
    """One question with its haystack as a Conversation."""
    check.typed(item, dict, where)
    qid = check.need(item, "question_id", str, where)
    sessions = _haystack(check, item, where)
    question = _question(check, item, qid, sessions, where)
    return Conversation(qid, SPEAKERS, sessions, (question,))


def _haystack(check: FileChecker, item: dict[str, Any], where: str) -> tuple[Session, ...]:
    """The haystack sessions, dated and identified by their parallel lists."""
    raw_sessions = check.need(item, "haystack_sessions", list, where)
    dates = check.need(item, "haystack_dates", list, where)
    ids = check.need(item, "haystack_session_ids", list, where)
    if not len(raw_sessions) == len(dates) == len(ids):
        check.fail(
            where,
            f"haystack_sessions/haystack_dates/haystack_session_ids lengths differ "
            f"({len(raw_sessions)}/{len(dates)}/{len(ids)})",
        )
    sessions = []
    for i, (raw, date, sid) in enumerate(zip(raw_sessions, dates, ids, strict=True)):
        at = f"{where}.haystack_sessions[{i}]"
        check.typed(date, str, f"{where}.haystack_dates[{i}]")
        check.typed(sid, str, f"{where}.haystack_session_ids[{i}]")
        check.typed(raw, list, at)
        turns = tuple(_turn(check, t, sid, j, i + 1, f"{at}[{j}]") for j, t in enumerate(raw))
        sessions.append(Session(index=i + 1, date_time=date, turns=turns))
    return tuple(sessions)


def _turn(check: FileChecker, raw: Any, sid: str, j: int, session: int, where: str) -> Turn:
    """A chat turn: speaker is the role, dia_id `<session_id>:<j+1>`."""
    check.typed(raw, dict, where)
    return Turn(
        speaker=check.need(raw, "role", str, where),
        text=check.need(raw, "content", str, where),
        dia_id=f"{sid}:{j + 1}",
        session=session,
    )


def _question(
    check: FileChecker, item: dict[str, Any], qid: str, sessions: tuple[Session, ...], where: str
) -> Question:
    """The question, typed by `question_type`, with has_answer turns as evidence."""
    qtype = check.need(item, "question_type", str, where)
    if qtype not in CATEGORY_OF_TYPE:
        known = ", ".join(CATEGORY_OF_TYPE)
        check.fail(f"{where}.question_type", f"unknown type {qtype!r} (known: {known})")
    if "answer" not in item:
        check.fail(where, "'answer' missing")
    answer = item["answer"]
    if isinstance(answer, bool) or not isinstance(answer, str | int | float):
        check.fail(f"{where}.answer", f"must be a string or number, got {type(answer).__name__}")
    return Question(
        question_id=qid,
        conversation_id=qid,
        question=check.need(item, "question", str, where),
        category=CATEGORY_OF_TYPE[qtype],
        gold=str(answer),
        evidence=_evidence(item, sessions),
        question_type=qtype,
        question_date=check.maybe(item, "question_date", str, where),
        is_abstention=qid.endswith("_abs"),
    )


def _evidence(item: dict[str, Any], sessions: tuple[Session, ...]) -> tuple[str, ...]:
    """dia_ids of the turns the file marks `has_answer: true`."""
    marked: list[str] = []
    for session, raw in zip(sessions, item["haystack_sessions"], strict=True):
        for turn, raw_turn in zip(session.turns, raw, strict=True):
            if raw_turn.get("has_answer") is True:
                marked.append(turn.dia_id)
    return tuple(marked)
