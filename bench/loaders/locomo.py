"""LoCoMo loader (methodology §1): `locomo10.json` and any file in its format.

Rules, each of which a published harness has got wrong:
- sessions are sorted by the integer n of `session_<n>` (text order puts 10 before 2);
- each session's date is read from its own key `session_<n>_date_time` (conv-26 has 35
  date keys for 19 sessions, so positional pairing drifts);
- an image turn's `blip_caption` becomes `Turn.image_caption`, rendered
  `[shares a photo: …]`; both speakers are kept (`speaker_a`, `speaker_b`);
- `question_id` is `<sample_id>:<index in qa>` (12 question texts repeat);
- `category` stays an integer; `gold = str(answer)` (a list answer is joined with ", ");
  category 5 has `gold = None` and keeps the trap as `adversarial_answer`;
- evidence strings are normalised to `D<s>:<t>` ids: `"D8:6; D9:17"` and
  `"D9:1 D4:4"` are split, `"D:11:26"` becomes `D11:26`, and a bare `"D"` is dropped.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from bench.loaders.check import FileChecker
from bench.loaders.semantics import load_conversations
from bench.types import Conversation, Dataset, Question, Session, Turn

ADVERSARIAL = 5
"""The category whose gold is "not answerable" (official numbering)."""
CATEGORIES = (1, 2, 3, 4, 5)
"""Every category a LoCoMo file may use (official numbering 1-5)."""

_SESSION_KEY = re.compile(r"session_(\d+)")
_EVIDENCE_ID = re.compile(r"D:?(\d+):(\d+)")
_FIX = "fix the file, or point dataset.path / BENCH_DATA_DIR at a valid LoCoMo-format file"


def load_locomo(path: Path, name: str = "locomo") -> Dataset:
    """Load a LoCoMo-format file into a Dataset (raises DatasetError if malformed)."""
    return load_conversations(
        FileChecker(path, _FIX), name, "conversations", "sample_id", _conversation
    )


def _conversation(check: FileChecker, sample: Any, where: str) -> Conversation:
    """One `sample`: its sessions in integer order and its questions."""
    check.typed(sample, dict, where)
    sample_id = check.need(sample, "sample_id", str, where)
    body = check.need(sample, "conversation", dict, where)
    body_at = f"{where}.conversation"
    speakers = (
        check.need(body, "speaker_a", str, body_at),
        check.need(body, "speaker_b", str, body_at),
    )
    numbers = sorted(int(m[1]) for key in body if (m := _SESSION_KEY.fullmatch(key)))
    sessions = tuple(_session(check, body, n, body_at) for n in numbers)
    qa = check.need(sample, "qa", list, where)
    questions = tuple(
        _question(check, item, sample_id, i, f"{where}.qa[{i}]") for i, item in enumerate(qa)
    )
    return Conversation(sample_id, speakers, sessions, questions)


def _session(check: FileChecker, body: dict[str, Any], n: int, where: str) -> Session:
    """Session n with the date from its own `session_<n>_date_time` key."""
    date = check.need(body, f"session_{n}_date_time", str, where)
    turns_at = f"{where}.session_{n}"
    raw_turns = check.typed(body[f"session_{n}"], list, turns_at)
    turns = tuple(_turn(check, t, n, f"{turns_at}[{j}]") for j, t in enumerate(raw_turns))
    return Session(index=n, date_time=date, turns=turns)


def _turn(check: FileChecker, raw: Any, session: int, where: str) -> Turn:
    """A turn; an image's `blip_caption` is the only trace of the photo, so it is kept."""
    check.typed(raw, dict, where)
    return Turn(
        speaker=check.need(raw, "speaker", str, where),
        text=check.need(raw, "text", str, where),
        dia_id=check.need(raw, "dia_id", str, where),
        session=session,
        image_caption=check.maybe(raw, "blip_caption", str, where) or None,
    )


def _question(check: FileChecker, raw: Any, sample_id: str, index: int, where: str) -> Question:
    """A qa item; category 5 has no gold and keeps the trap as `adversarial_answer`."""
    check.typed(raw, dict, where)
    category = check.need(raw, "category", int, where)
    if category not in CATEGORIES:
        check.fail(f"{where}.category", f"{category} is not a LoCoMo category {list(CATEGORIES)}")
    if category == ADVERSARIAL:
        gold = None
    elif "answer" not in raw:
        check.fail(where, f"'answer' missing (required for category {category})")
    else:
        gold = _answer_text(check, raw["answer"], f"{where}.answer")
    return Question(
        question_id=f"{sample_id}:{index}",
        conversation_id=sample_id,
        question=check.need(raw, "question", str, where),
        category=category,
        gold=gold,
        evidence=_evidence(check, raw.get("evidence") or [], f"{where}.evidence"),
        adversarial_answer=_optional_text(check, raw, "adversarial_answer", where),
        stale_answer=_optional_text(check, raw, "stale_answer", where),
    )


def _optional_text(check: FileChecker, raw: dict[str, Any], key: str, where: str) -> str | None:
    """An optional answer-like field as text, or None when absent or null."""
    value = raw.get(key)
    return None if value is None else _answer_text(check, value, f"{where}.{key}")


def _answer_text(check: FileChecker, value: Any, where: str) -> str:
    """An answer as text: ints become digits, a list is joined with ", "."""
    if isinstance(value, list):
        return ", ".join(_answer_text(check, v, f"{where}[{i}]") for i, v in enumerate(value))
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        check.fail(where, f"must be a string, number or list, got {type(value).__name__}")
    return str(value)


def _evidence(check: FileChecker, raw: Any, where: str) -> tuple[str, ...]:
    """Evidence as `D<s>:<t>` ids, splitting and repairing the file's malformed entries."""
    check.typed(raw, list, where)
    ids: list[str] = []
    for i, entry in enumerate(raw):
        check.typed(entry, str, f"{where}[{i}]")
        for token in re.split(r"[;,\s]+", entry):
            if m := _EVIDENCE_ID.fullmatch(token):
                ids.append(f"D{m[1]}:{m[2]}")
    return tuple(ids)
