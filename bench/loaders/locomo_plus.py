"""LoCoMo-Plus loader (methodology §2c): cue/trigger items stitched into LoCoMo, seeded.

Upstream (xjtuleeyf/Locomo-Plus, `data/build_conv.py`) builds one haystack per item: it
draws a LoCoMo conversation at random, dates the trigger one week after the
conversation's last session, dates the cue `time_gap` before the trigger, inserts both
as new sessions in time order and maps the dialogue's `A`/`B` to the conversation's two
speakers. Its draw is unseeded; here the draws come from `random.Random(dataset.seed)`,
one `choice` per item in file order, so a seed fixes every haystack.

Rules kept from upstream, in this project's words:
- session stamps are read as `<h>:<mm> <am|pm> on <d> <Month>, <yyyy>`;
- a gap is the first "<count> week(s)|month(s)|year(s)" in `time_gap` (count: digits,
  one..twelve, a/an) as 7, 30 or 365 days per unit; a gap without one (e.g. "several
  months later") is 0 days, so that cue lands just before the trigger;
- sessions dated the same as the cue stay before it (a stable sort on the date);
- dialogue lines that start with neither `A:` nor `B:` are dropped; `A` is `speaker_a`,
  anything else `speaker_b`.

What armbench makes of it: the haystack is the LoCoMo conversation with the cue session
inserted (LoCoMo turns keep their `D<s>:<t>` ids, cue turns are `CUE:<k>`; sessions are
renumbered in time order); the trigger is the question, asked at its own date; the gold
is the speaker-mapped cue (what upstream's judge is shown) and the cue turns are the
evidence. An item repeating another's cue and trigger is refused (it would be scored
twice). Ids: conversation `plus-<item>@<LoCoMo sample_id>`, question
`plus-<item>:<relation_type>` (item = 3-digit position in the file, independent of the
seed). The dataset's SHA-256 is that of the stitched result (`content_key`).
"""

from __future__ import annotations

import random
import re
from dataclasses import asdict, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from bench.config import DatasetConfig
from bench.errors import DatasetError
from bench.hashing import content_key
from bench.haystack import HOST_SEPARATOR
from bench.loaders.check import FileChecker
from bench.loaders.locomo import load_locomo
from bench.loaders.resolve import PROJECT_ROOT, resolve_data_file
from bench.loaders.semantics import check_questions
from bench.types import Conversation, Dataset, Question, Session, Turn

RELATION_TYPES = ("causal", "goal", "state", "value")
"""The relation types upstream's items use; `category` is the 1-based place here."""
QUERY_DELAY = timedelta(days=7)
"""The trigger is dated this long after the conversation's last session (upstream)."""
_DAYS_PER_UNIT = {"week": 7, "month": 30, "year": 365}
_COUNT_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}  # fmt: skip
_GAP = re.compile(rf"\b(\d+|{'|'.join(_COUNT_WORDS)})\b\s*(week|month|year)s?\b")
_STAMP = "%I:%M %p on %d %B, %Y"
_FIX = "fix the file, or point dataset.path at a valid LoCoMo-Plus file"
_LOCOMO_CONF = PROJECT_ROOT / "conf" / "dataset" / "locomo.yaml"


def gap_days(time_gap: str) -> int:
    """Days of a `time_gap` phrase: first count × unit (7/30/365), else 0 (upstream's rule).

    >>> gap_days("about six weeks later"), gap_days("a year after"), gap_days("several months")
    (42, 365, 0)
    """
    m = _GAP.search(time_gap.lower().strip())
    if not m:
        return 0
    count = int(m[1]) if m[1].isdigit() else _COUNT_WORDS[m[1]]
    return count * _DAYS_PER_UNIT[m[2]]


def locomo_stamp(moment: datetime) -> str:
    """A datetime in LoCoMo's own session-stamp form, e.g. `1:56 pm on 8 May, 2023`."""
    hour = moment.hour % 12 or 12
    half = "am" if moment.hour < 12 else "pm"
    return f"{hour}:{moment.minute:02d} {half} on {moment.day} {moment:%B}, {moment.year}"


def load_locomo_plus_config(cfg: DatasetConfig) -> Dataset:
    """Resolve the items file and the canonical LoCoMo file, then stitch with `dataset.seed`."""
    if cfg.seed is None:
        raise DatasetError(
            "dataset.seed=null: LoCoMo-Plus stitching needs a seed; pass dataset.seed=<int>"
        )
    import yaml

    base = DatasetConfig(**yaml.safe_load(_LOCOMO_CONF.read_text()))
    base.errata = None
    locomo = load_locomo(resolve_data_file(base), "locomo")
    return load_locomo_plus(resolve_data_file(cfg), locomo.conversations, cfg.seed, cfg.name)


def load_locomo_plus(
    path: Path, base: tuple[Conversation, ...], seed: int, name: str = "locomo_plus"
) -> Dataset:
    """Stitch every item of `path` into a seeded choice of the `base` conversations."""
    check = FileChecker(path, _FIX)
    items = check.typed(check.read_json(), list, "top level (a list of items)")
    if not base:
        raise DatasetError("LoCoMo has no conversations to stitch into; check the LoCoMo file")
    rng = random.Random(seed)
    conversations = []
    seen: dict[tuple[str, str], int] = {}
    for i, item in enumerate(items):
        host = rng.choice(base)
        conversations.append(_stitch(check, item, i, host, f"[{i}]"))
        key = (item["cue_dialogue"].strip(), item["trigger_query"].strip())  # checked strings
        if key in seen:
            check.fail(
                f"[{i}]",
                f"repeats item [{seen[key]}] (the same cue and trigger): "
                "a duplicated item would be scored twice",
            )
        seen[key] = i
    check_questions(check, conversations, "items")
    digest = content_key({"seed": seed, "conversations": [asdict(c) for c in conversations]})
    return Dataset(name, str(path), digest, tuple(conversations))


def _stitch(check: FileChecker, item: Any, i: int, host: Conversation, where: str) -> Conversation:
    """One item's haystack: `host` with the cue session inserted; the trigger as question."""
    check.typed(item, dict, where)
    relation = check.need(item, "relation_type", str, where)
    if relation not in RELATION_TYPES:
        check.fail(f"{where}.relation_type", f"unknown {relation!r} (known: {RELATION_TYPES})")
    gap = check.need(item, "time_gap", str, where)
    times = [_session_time(check, host, s, where) for s in host.sessions]
    query_time = times[-1] + QUERY_DELAY
    cue_time = query_time - timedelta(days=gap_days(gap))
    cue = _dialogue(check, item, "cue_dialogue", host.speakers, where)
    trigger = _dialogue(check, item, "trigger_query", host.speakers, where)
    events = [
        (t, k, s.turns, s.date_time)
        for k, (t, s) in enumerate(zip(times, host.sessions, strict=True))
    ]
    events.append((cue_time, len(events), cue, locomo_stamp(cue_time)))
    events.sort(key=lambda e: (e[0], e[1]))  # stable: a session dated as the cue stays first
    sessions = tuple(
        Session(n, stamp, tuple(replace(t, session=n) for t in turns))
        for n, (_, _, turns, stamp) in enumerate(events, start=1)
    )
    item_id = f"plus-{i:03d}"
    conv_id = f"{item_id}{HOST_SEPARATOR}{host.conversation_id}"
    question = Question(
        question_id=f"{item_id}:{relation}",
        conversation_id=conv_id,
        question="\n".join(t.render() for t in trigger),
        category=RELATION_TYPES.index(relation) + 1,
        gold="\n".join(t.render() for t in cue),
        evidence=tuple(t.dia_id for t in cue),
        question_type=relation,
        question_date=locomo_stamp(query_time),
    )
    return Conversation(conv_id, host.speakers, sessions, (question,))


def _session_time(check: FileChecker, host: Conversation, session: Session, where: str) -> datetime:
    """A LoCoMo session stamp as a datetime (upstream's format), or one DatasetError."""
    try:
        return datetime.strptime(session.date_time, _STAMP)
    except ValueError:
        check.fail(
            where,
            f"LoCoMo {host.conversation_id} session {session.index} is dated "
            f"{session.date_time!r}, not '<h>:<mm> <am|pm> on <d> <Month>, <yyyy>'",
        )


def _dialogue(
    check: FileChecker, item: dict[str, Any], key: str, speakers: tuple[str, ...], where: str
) -> tuple[Turn, ...]:
    """`A:`/`B:` lines as turns of the speakers (other lines dropped, as upstream)."""
    text = check.need(item, key, str, where)
    turns: list[Turn] = []
    for line in text.split("\n"):
        line = line.strip()
        if line[:2] in ("A:", "B:"):
            speaker = speakers[0] if line[0] == "A" else speakers[-1]
            dia_id = f"CUE:{len(turns) + 1}" if key == "cue_dialogue" else f"Q:{len(turns) + 1}"
            turns.append(Turn(speaker=speaker, text=line[2:].strip(), dia_id=dia_id, session=0))
    if not turns:
        check.fail(f"{where}.{key}", "no line starts with 'A:' or 'B:' (nothing to insert)")
    return tuple(turns)
