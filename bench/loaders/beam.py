"""BEAM loader (methodology §2b): a tier folder of `<n>/chat.json` + probing questions.

As upstream writes it (mohammadtavakoli78/BEAM):
- `chat.json` is a list of batches `{batch_number, turns, time_anchor}`; `turns` is a list
  of exchanges, each a list of messages `{role, id, content, …}`. The 10M tier wraps the
  batches in plans, `[{"<plan>": [batch, …]}, …]`; both shapes are read.
- Each batch becomes one Session (numbered 1.. in file order); its date is the first
  `time_anchor` among its messages (upstream puts it on the batch's first message),
  else the batch's own `time_anchor`, else `undated`.
- A message keeps its upstream `id` as the turn's dia_id (`"17"`) and its `role`
  (`user` / `assistant`) as the speaker; `content` is kept verbatim (with upstream's
  `->-> b,t` index markers, which upstream also shows its models).
- `probing_questions.json` maps each of the ten abilities to a list of questions. A
  question keeps its ability (as `question_type`; `category` is the ability's 1-based
  place in `ABILITIES`), `difficulty`, `rubric` and ideal answer (as `gold`: the field
  `IDEAL_ANSWER_KEY` names per ability), and `source_chat_ids` flattened, in order and
  without repeats, as evidence (a list, a list of lists, or an object of lists).
- Question id: `beam-<tier>-<n>:<ability>:<index in the ability's list>`; abstention
  questions end in `_abs`, the project's abstention marker (as LongMemEval's). A
  question whose text repeats another of the same chat is refused (scored twice).
- A synthetic tier (bench/loaders/beam_synthetic.py; `SYNTHETIC.json` in the folder) loads
  as the dataset `<name>-synthetic` with ids `beam-synthetic-<tier>-<n>…`.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from bench.loaders.beam_source import (
    CHAT,
    conversation_folders,
    folder_sha256,
    is_synthetic,
    questions_file,
)
from bench.loaders.check import FileChecker
from bench.loaders.semantics import check_conversation, check_questions
from bench.types import Conversation, Dataset, Question, Session, Turn

log = logging.getLogger("bench.loaders")

IDEAL_ANSWER_KEY: dict[str, str] = {
    "abstention": "ideal_response",
    "contradiction_resolution": "ideal_answer",
    "event_ordering": "answer",
    "information_extraction": "answer",
    "instruction_following": "expected_compliance",
    "knowledge_update": "answer",
    "multi_session_reasoning": "answer",
    "preference_following": "expected_compliance",
    "summarization": "ideal_summary",
    "temporal_reasoning": "answer",
}
"""Ability → the field holding its ideal answer, as upstream's files name it."""

ABILITIES = tuple(IDEAL_ANSWER_KEY)
"""The ten abilities, in upstream's (alphabetical) file order."""
CATEGORY_OF_ABILITY = {ability: i + 1 for i, ability in enumerate(ABILITIES)}
ABSTENTION = "abstention"
SPEAKERS = ("user", "assistant")
_FIX = "fix the file, or point dataset.path at a BEAM tier folder in the upstream layout"


def load_beam(root: Path, name: str = "beam", tier: str = "128k") -> Dataset:
    """Load every numbered conversation folder under `root` (raises DatasetError if malformed)."""
    conversations = []
    synthetic = is_synthetic(root)
    name, prefix = (f"{name}-synthetic", "beam-synthetic") if synthetic else (name, "beam")
    for folder in conversation_folders(root):
        chat = FileChecker(folder / CHAT, _FIX)
        check = FileChecker(questions_file(folder), _FIX)
        conv_id = f"{prefix}-{tier}-{folder.name}"
        conversations.append(
            beam_conversation(conv_id, (chat, chat.read_json()), (check, check.read_json()))
        )
    check_beam(FileChecker(root, _FIX), conversations)
    return Dataset(name, str(root), folder_sha256(root), tuple(conversations))


def beam_conversation(
    conv_id: str, chat: tuple[FileChecker, Any], questions: tuple[FileChecker, Any]
) -> Conversation:
    """One conversation from its parsed chat and probing questions (each with its checker)."""
    sessions = _chat(*chat)
    conv = Conversation(conv_id, SPEAKERS, sessions, _questions(*questions, conv_id, sessions))
    check_conversation(chat[0], conv, "top level", "id")
    return conv


def check_beam(check: FileChecker, conversations: list[Conversation]) -> None:
    """Refuse a tier without conversations, or whose question ids repeat."""
    if not conversations:
        check.fail("", "no numbered conversation folders")
    check_questions(check, conversations, "conversations")


def _chat(check: FileChecker, raw: Any) -> tuple[Session, ...]:
    """The batches of one `chat.json` as sessions (plans of the 10M tier flattened)."""
    data = check.typed(raw, list, "top level (a list of batches)")
    batches: list[tuple[Any, str]] = []
    for i, item in enumerate(data):
        where = f"[{i}]"
        check.typed(item, dict, where)
        if "turns" in item or len(item) != 1:
            batches.append((item, where))
            continue
        ((plan, inner),) = item.items()
        inner_at = f"{where}.{plan}"
        check.typed(inner, list, inner_at)
        batches.extend((b, f"{inner_at}[{j}]") for j, b in enumerate(inner))
    seen: dict[int, str] = {}
    return tuple(_batch(check, b, k + 1, at, seen) for k, (b, at) in enumerate(batches))


def _batch(check: FileChecker, batch: Any, index: int, where: str, seen: dict[int, str]) -> Session:
    """One batch: its messages in order, dated by its first time anchor."""
    check.typed(batch, dict, where)
    exchanges = check.need(batch, "turns", list, where)
    turns: list[Turn] = []
    anchor: str | None = None
    for e, exchange in enumerate(exchanges):
        at = f"{where}.turns[{e}]"
        check.typed(exchange, list, at)
        for m, message in enumerate(exchange):
            turn, time_anchor = _message(check, message, index, f"{at}[{m}]", seen)
            anchor = anchor or time_anchor
            turns.append(turn)
    anchor = anchor or check.maybe(batch, "time_anchor", str, where)
    return Session(index=index, date_time=anchor or "undated", turns=tuple(turns))


def _message(
    check: FileChecker, raw: Any, session: int, where: str, seen: dict[int, str]
) -> tuple[Turn, str | None]:
    """One message as a Turn (dia_id = its upstream id, unique in the conversation)."""
    check.typed(raw, dict, where)
    msg_id = check.need(raw, "id", int, where)
    if msg_id in seen:
        check.fail(f"{where}.id", f"id {msg_id} repeats the one at {seen[msg_id]}")
    seen[msg_id] = where
    turn = Turn(
        speaker=check.need(raw, "role", str, where),
        text=check.need(raw, "content", str, where),
        dia_id=str(msg_id),
        session=session,
    )
    return turn, check.maybe(raw, "time_anchor", str, where)


def _questions(
    check: FileChecker, raw: Any, conv_id: str, sessions: tuple[Session, ...]
) -> tuple[Question, ...]:
    """Every probing question of one conversation, ability by ability in file order."""
    data = check.typed(raw, dict, "top level (an object of abilities)")
    known = {t.dia_id for s in sessions for t in s.turns}
    out: list[Question] = []
    seen: dict[str, str] = {}
    for ability, items in data.items():
        if ability not in CATEGORY_OF_ABILITY:
            check.fail(ability, f"unknown ability (known: {', '.join(ABILITIES)})")
        check.typed(items, list, ability)
        for i, item in enumerate(items):
            question = _question(check, item, conv_id, ability, i)
            text = question.question.strip()
            if text in seen:
                check.fail(
                    f"{ability}[{i}]",
                    f"repeats the question of {seen[text]}: "
                    "a duplicated probing question would be scored twice",
                )
            seen[text] = f"{ability}[{i}]"
            out.append(question)
    unresolved = sorted({e for q in out for e in q.evidence} - known, key=int)
    if unresolved:
        log.warning("%s: source_chat_ids %s name no message of the chat", check.path, unresolved)
    return tuple(out)


def _question(check: FileChecker, item: Any, conv_id: str, ability: str, i: int) -> Question:
    """One probing question with its rubric, difficulty, ideal answer and evidence."""
    where = f"{ability}[{i}]"
    check.typed(item, dict, where)
    rubric = check.need(item, "rubric", list, where)
    if not rubric:
        check.fail(f"{where}.rubric", "empty (a question is judged on its rubric items)")
    for r, entry in enumerate(rubric):
        check.typed(entry, str, f"{where}.rubric[{r}]")
    suffix = "_abs" if ability == ABSTENTION else ""
    return Question(
        question_id=f"{conv_id}:{ability}:{i}{suffix}",
        conversation_id=conv_id,
        question=check.need(item, "question", str, where),
        category=CATEGORY_OF_ABILITY[ability],
        gold=check.need(item, IDEAL_ANSWER_KEY[ability], str, where),
        evidence=_evidence(check, item.get("source_chat_ids"), f"{where}.source_chat_ids"),
        question_type=ability,
        is_abstention=ability == ABSTENTION,
        rubric=tuple(rubric),
        difficulty=check.maybe(item, "difficulty", str, where),
    )


def _evidence(check: FileChecker, raw: Any, where: str) -> tuple[str, ...]:
    """`source_chat_ids` flattened in order without repeats: ints, lists of them, objects."""
    if raw is None:
        return ()
    found: list[str] = []
    groups = raw.items() if isinstance(raw, dict) else [("", raw)]
    for key, group in groups:
        at = f"{where}.{key}" if key else where
        check.typed(group, list, at)
        for j, value in enumerate(group):
            values = value if isinstance(value, list) else [value]
            for v in values:
                found.append(str(check.typed(v, int, f"{at}[{j}]")))
    return tuple(dict.fromkeys(found))
