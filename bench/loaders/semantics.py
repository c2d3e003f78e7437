"""Checks a dataset must pass beyond its JSON shape: ids, sessions, turns, questions.

Every refusal is one `DatasetError` naming the file and the JSON path (via
`FileChecker.fail`); an unknown speaker is only a warning, since some datasets
(LongMemEval's `system` turns) legitimately have a third role.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from bench.loaders.check import FileChecker
from bench.loaders.resolve import sha256_file
from bench.types import Conversation, Dataset

log = logging.getLogger("bench.loaders")


def check_conversation(check: FileChecker, conv: Conversation, where: str, id_field: str) -> None:
    """Refuse an empty id, and a conversation with no sessions or no turns at all.

    Warns on an empty session and on a speaker who is neither of the conversation's.
    """
    if not conv.conversation_id.strip():
        check.fail(f"{where}.{id_field}", "empty id (ids name files and must be non-empty)")
    if not conv.sessions:
        check.fail(where, "no sessions (a conversation needs at least one turn)")
    empty = [s.index for s in conv.sessions if not s.turns]
    if len(empty) == len(conv.sessions):
        check.fail(where, "no turns in any session (nothing to remember)")
    if empty:  # kept: the session's date still orders the others
        log.warning("%s: %s: session(s) %s have no turns", check.path, where, empty)
    unknown = sorted({t.speaker for s in conv.sessions for t in s.turns} - set(conv.speakers))
    if unknown:
        log.warning(
            "%s: %s: speaker(s) %s are neither of %s", check.path, where, unknown, conv.speakers
        )


def check_questions(check: FileChecker, conversations: list[Conversation], item_label: str) -> None:
    """Refuse a dataset without questions, with one question id twice, or an empty question.

    An empty (or blank) question text would be asked and scored like any other: every
    arm answers nothing in particular, and the file is what is wrong.
    """
    seen: dict[str, int] = {}
    for i, conv in enumerate(conversations):
        for question in conv.questions:
            if not question.question.strip():
                check.fail(
                    f"{item_label}[{i}]",
                    f"question {question.question_id!r} has an empty question text",
                )
            if question.question_id in seen:
                check.fail(
                    f"{item_label}[{i}]",
                    f"question id {question.question_id!r} repeats one in "
                    f"{item_label}[{seen[question.question_id]}]",
                )
            seen[question.question_id] = i
    if not seen:
        check.fail("", "no questions in the file (nothing to benchmark)")


def load_conversations(
    check: FileChecker,
    name: str,
    item_label: str,
    id_field: str,
    build: Callable[[FileChecker, Any, str], Conversation],
) -> Dataset:
    """Read a JSON list, build one Conversation per item, refuse repeated ids."""
    data = check.read_json()
    check.typed(data, list, f"top level (a list of {item_label})")
    conversations: list[Conversation] = []
    seen: set[str] = set()
    for i, item in enumerate(data):
        conv = build(check, item, f"{item_label}[{i}]")
        if conv.conversation_id in seen:
            check.fail(f"{item_label}[{i}].{id_field}", f"{conv.conversation_id!r} repeated")
        check_conversation(check, conv, f"{item_label}[{i}]", id_field)
        seen.add(conv.conversation_id)
        conversations.append(conv)
    check_questions(check, conversations, item_label)
    path = check.path
    return Dataset(
        name=name, path=str(path), sha256=sha256_file(path), conversations=tuple(conversations)
    )
