"""A context block parsed into dated, speaker-tagged lines and sentences, ranked by overlap.

Lines are dated by the nearest `[Session n — date]` header above them, a leading
`(8 May 2023)` or a `(valid 8 May 2023 – …)` window (memory arms' fact markup). Lines
that open with a tag (`<FACTS>`, `<ANSWER_TYPE>…`) are wrappers or instructions to the
reader, never evidence, so they are dropped here and can never be answered from. A turn
repeated under the same session date (rag's overlapping windows) is kept once, so it
neither lowers its own terms' IDF nor fills two places of a list answer.

Ranking: a line's score is the IDF-weighted sum of the question's stemmed content terms
it contains,

    overlap(line) = Σ_{t ∈ q ∩ line} idf(t),   idf(t) = ln(1 + N / df(t)),
    score(line)   = (overlap(line) + NEIGHBOUR · overlap(previous line)) · penalty,

with N the number of lines, `penalty` = OTHER_SPEAKER_PENALTY for a line by a speaker
other than the one the question names (and not mentioning them), QUESTION_PENALTY for a
line that only asks a question, and 1 + PASSAGE_PRIOR · PASSAGE_DECAY^k for a line of the k-th
passage when the passages go back in time (`relevance_ordered`: a retriever's order, not
a transcript's), and coverage = overlap / Σ_{t ∈ q} idf(t). A date the
question names ("on 7 July, 2023", `when_asked`) counts as one term of q in place of its
words, held by the lines said on that day (or in that month), df = how many those are.
A name used only to address someone ("Hey Jon!") is not a mention (`mentions`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import date
from functools import lru_cache

from bench.providers.offline_reader.when_asked import anchor_day, asked_date
from bench.text import content_terms

NEIGHBOUR = 0.5
"""Share of the previous line's overlap a line inherits: a reply answers the turn before it."""
OTHER_SPEAKER_PENALTY = 0.6
QUESTION_PENALTY = 0.85
"""A turn that asks a question rarely holds the answer; the reply after it does."""
PASSAGE_PRIOR = 0.2
"""Passages in order of relevance (`relevance_ordered`): the line of the k-th passage
(0-based) scores PASSAGE_PRIOR · PASSAGE_DECAY^k more, so the retriever's ranking breaks
near-ties in overlap."""
PASSAGE_DECAY = 0.7

_HEADER = re.compile(r"^\s*\[Session \d+ — (?P<date>[^\]]+)\]")
_SPEAKER = re.compile(r"^\s*(?P<name>[A-Z][\w'-]*(?: [A-Z][\w'-]*)?)\s*:\s*")
_TAG_LINE = re.compile(r"^\s*</?[A-Za-z_][\w-]*>")
_BULLET = re.compile(r"^\s*(?:[-*>]\s*)+")
_LEADING_DATE = re.compile(r"^\((?P<date>[^()]*\d{4})\)\s*")
_VALIDITY = re.compile(r"\s*\(valid (?P<date>[^–)]*?\d{4})\s*–[^)]*\)")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)|\s+[–—]\s+|\s*\[shares? (?:a )?photo:\s*|\]")


@dataclass(frozen=True)
class Line:
    """One evidence line of the context."""

    text: str
    """The line without list marks, leading date or validity window."""
    body: str
    """`text` without its `Speaker:` prefix."""
    anchor: str | None
    """The date the line was said on (session header or fact markup), as written."""
    speaker: str | None
    """The speaker named by a `Name:` prefix, if any."""
    terms: frozenset[str]
    """Stemmed content terms of `text`."""
    position: int
    """0-based order of the line in the context (stable tie-break)."""
    passage: int = 0
    """0-based order of the passage (block between blank lines) the line is in."""


@dataclass(frozen=True)
class Index:
    """A parsed context: its lines, term IDF and the speakers that appear."""

    lines: tuple[Line, ...]
    """Evidence lines in context order."""
    idf: dict[str, float]
    """ln(1 + N / df) per stemmed term."""
    speakers: frozenset[str]
    """Every `Name:` speaker seen."""
    postings: dict[str, tuple[int, ...]]
    """Positions of the lines holding each term (scoring touches only matching lines)."""
    by_relevance: bool = False
    """The passages are not in date order, so they were put in order of relevance
    (`relevance_ordered`): `rank` then gives earlier passages PASSAGE_PRIOR."""


@lru_cache(maxsize=32)
def index(context: str) -> Index:
    """Parse and index a context block once; raw contexts repeat for every question."""
    lines: list[Line] = []
    anchor: str | None = None
    seen: set[tuple[str, str | None]] = set()
    passage = 0
    for raw in context.splitlines():
        if not raw.strip():
            passage += 1 if lines and lines[-1].passage == passage else 0
            continue
        header = _HEADER.match(raw)
        if header:
            anchor = header.group("date")
            continue
        if _TAG_LINE.match(raw):
            continue
        text, own_date = strip_markup(raw)
        if not text or (own_date is None and (text, anchor) in seen):
            continue  # overlapping transcript windows repeat turns; count each turn once
        seen.add((text, anchor))
        speaker = _SPEAKER.match(text)
        name = speaker.group("name") if speaker else None
        body = text[speaker.end() :] if speaker else text
        terms = frozenset(content_terms(text))
        lines.append(Line(text, body, own_date or anchor, name, terms, len(lines), passage))
    postings: dict[str, list[int]] = {}
    for line in lines:
        for t in line.terms:
            postings.setdefault(t, []).append(line.position)
    n = max(len(lines), 1)
    idf = {t: math.log(1 + n / len(ids)) for t, ids in postings.items()}
    speakers = frozenset(line.speaker for line in lines if line.speaker)
    posted = {t: tuple(ids) for t, ids in postings.items()}
    return Index(tuple(lines), idf, speakers, posted, relevance_ordered(lines))


def relevance_ordered(lines: list[Line]) -> bool:
    """Some passage opens on a date earlier than the passage before it.

    A transcript or a session list runs forward in time; passages that go back in time
    were put in order by something else: a retriever's score (rag's top-k windows), so
    the first passages are the ones the retriever judged most relevant.
    """
    opening: dict[int, date] = {}
    for line in lines:
        day = anchor_day(line.anchor) if line.anchor else None
        if day is not None and line.passage not in opening:
            opening[line.passage] = day
    days = [opening[p] for p in sorted(opening)]
    return any(later < earlier for earlier, later in zip(days, days[1:], strict=False))


@lru_cache(maxsize=4096)
def sentences(body: str) -> tuple[str, ...]:
    """`body` split into sentences and photo captions (only chosen lines are ever split)."""
    parts = tuple(s.strip() for s in _SENTENCE_END.split(body) if s and s.strip())
    return parts or (body,)


def strip_markup(raw: str) -> tuple[str, str | None]:
    """A context line without list marks, a leading `(date)` or a `(valid … )` window.

    Returns the bare text and the date that markup gave it, if any: memory arms date
    their facts that way instead of with session headers.
    """
    text = _BULLET.sub("", raw).strip()
    date = None
    lead = _LEADING_DATE.match(text)
    if lead:
        date, text = lead.group("date"), text[lead.end() :]
    window = _VALIDITY.search(text)
    if window:
        date = date or window.group("date")
        text = text[: window.start()] + text[window.end() :]
    return text.strip(), date


@dataclass(frozen=True)
class Ranked:
    """A line with its score and the share of the question's weight it covers."""

    line: Line
    """The scored line."""
    score: float
    """Penalised IDF overlap with the question."""
    coverage: float
    """score / total question weight, in [0, 1]."""


def question_weights(
    idx: Index, question: str, skip: frozenset[str] = frozenset()
) -> dict[str, float]:
    """IDF weight of each distinct content term of the question but `skip` (unseen: max IDF).

    `rank` skips the words of a date the question is pinned to when some line was said
    on it: `date_matches` scores that date against the lines' anchors instead.
    """
    default_idf = math.log(1 + max(len(idx.lines), 1))
    # Sorted: float sums must not depend on set order, which changes with the hash seed.
    terms = sorted(set(content_terms(question)) - skip)
    return {t: idx.idf.get(t, default_idf) for t in terms}


def date_matches(idx: Index, question: str) -> tuple[float, tuple[int, ...]]:
    """The IDF weight of the question's date and the lines said on it (none: 0, ())."""
    asked = asked_date(question)
    if asked is None:
        return 0.0, ()
    hits = tuple(line.position for line in idx.lines if asked.holds(line.anchor))
    if not hits:
        return 0.0, ()
    return math.log(1 + len(idx.lines) / len(hits)), hits


def named_speakers(idx: Index, question: str) -> set[str]:
    """Speakers of the context whose name the question contains."""
    low = question.lower()
    return {s for s in idx.speakers if re.search(rf"\b{re.escape(s.lower())}\b", low)}


def rank(idx: Index, question: str) -> list[Ranked]:
    """Lines with a positive score, best first; exact ties keep context order."""
    date_weight, dated = date_matches(idx, question)
    asked = asked_date(question)
    weight = question_weights(idx, question, asked.terms if asked and dated else frozenset())
    total = sum(weight.values()) + date_weight
    if not weight or not idx.lines:
        return []
    named = named_speakers(idx, question)
    names = {term for s in named for term in content_terms(s)}
    overlap: dict[int, float] = {}
    topical: set[int] = set()  # lines sharing more than the speaker's name with the question
    for t, w in weight.items():  # sorted terms: each line's sum is added in one order
        for i in idx.postings.get(t, ()):
            overlap[i] = overlap.get(i, 0.0) + w
            if t not in names:
                topical.add(i)
    for i in dated:
        overlap[i] = overlap.get(i, 0.0) + date_weight
    out = []
    for i in sorted(topical):
        line, cover = idx.lines[i], overlap[i]
        score = cover + NEIGHBOUR * overlap.get(i - 1, 0.0)
        if spoken_by_someone_else(line, named):
            score *= OTHER_SPEAKER_PENALTY
        if line.body.rstrip().endswith("?"):
            score *= QUESTION_PENALTY
        if idx.by_relevance:
            score *= 1 + PASSAGE_PRIOR * PASSAGE_DECAY**line.passage
        out.append(Ranked(line, score, cover / total))
    out.sort(key=lambda r: (-r.score, r.line.position))
    return out


def spoken_by_someone_else(line: Line, named: set[str]) -> bool:
    """The question names a speaker; this line is by another and does not mention them."""
    if not named or not line.speaker or line.speaker in named:
        return False
    return not mentions(line.body, named)


def about_someone_else(line: Line, named: set[str], speakers: frozenset[str]) -> bool:
    """Like `spoken_by_someone_else`, also for fact lines whose subject opens the line.

    A memory arm's fact ("Melanie ran a charity race.") has no `Name:` prefix; its first
    word, when it is one of the conversation's speakers, is taken as its subject.
    """
    if line.speaker:
        return spoken_by_someone_else(line, named)
    first = re.split(r"['’\s]", line.text, maxsplit=1)[0]
    if not named or first not in speakers or first in named:
        return False
    return not mentions(line.text, named)


_VOCATIVE = re.compile(
    r"\b(?:hey|hi|hello|thanks|thank you|congrats|congratulations|wow|oh|yeah|sorry|bye|"
    r"dear|so|aw+|ha+)\W{0,3}$",
    re.IGNORECASE,
)


def mentions(text: str, named: set[str]) -> bool:
    """`text` speaks about one of the named speakers, not merely to them.

    A name used as a form of address ("Hey Jon!", "Thanks, Jon.", "Jon, look") does
    not make another speaker's line about Jon: Gina telling Jon about her store is
    still about Gina's store. A mention followed by , ! ? or opening the text after a
    greeting word is taken as address.
    """
    for name in named:
        for match in re.finditer(rf"\b{re.escape(name)}\b", text, re.IGNORECASE):
            after = text[match.end() : match.end() + 1]
            before = text[: match.start()]
            if after in {"!", "?", ","} or _VOCATIVE.search(before):
                continue
            return True
    return False
