"""The embedded offline answerer: deterministic, extractive, no model and no network.

It reads the same messages an LLM would get (rules + context block + question) and
answers from the context alone:

1. split the context into lines, each dated by the nearest `[Session n — date]`
   header above it (or a date written in the line itself); lines opening with a tag
   (`<FACTS>`, `<ANSWER_TYPE>…`) are instructions or wrappers, never answers;
2. rank lines by IDF-weighted overlap of stemmed content words with the question,
   down-weighting lines by a different speaker than the one the question names;
3. if the best line covers too little of the question, answer `not mentioned`;
4. else answer a date for "when" questions, "Yes" for yes/no questions, the first
   number for "how many/much/old", or the best line's words that the question does
   not already contain.

Memory arms may date facts with a leading `(8 May 2023)` or a trailing
`(valid 8 May 2023 – present)` instead of session headers; both are read as the
line's date and kept out of span answers.

Its numbers measure what each arm's context makes reachable to a simple reader;
they are labelled offline and never presented as LLM-judged results.
"""

from __future__ import annotations

import math
import re
import time
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from bench.dates import first_relative
from bench.providers.base import CallOptions, Message
from bench.run.answer_prompt import ABSTAIN, extract_context
from bench.text import STOPWORDS, content_terms, format_date, session_date, stem
from bench.types import ChatResult

MODEL_ID = "offline-extractive"
MIN_COVERAGE = 0.4
OTHER_SPEAKER_PENALTY = 0.6
MAX_ANSWER_WORDS = 5

_HEADER = re.compile(r"^\s*\[Session \d+ — (?P<date>[^\]]+)\]")
_SPEAKER = re.compile(r"^\s*(?:[-*]\s*)?(?P<name>[A-Z][\w'-]*(?: [A-Z][\w'-]*)?)\s*:")
_EXPLICIT_DATE = re.compile(
    r"\b(\d{1,2} (?:January|February|March|April|May|June|July|August|September|October|"
    r"November|December),? \d{4}|(?:January|February|March|April|May|June|July|August|"
    r"September|October|November|December),? \d{4})\b"
)
_TAG_LINE = re.compile(r"^\s*</?[A-Za-z_][\w-]*>")
"""A line that opens with a tag: block wrappers (`<FACTS>`) and instructions to the reader
(`<ANSWER_TYPE>…</ANSWER_TYPE>`); neither is evidence, so neither is ever answered from."""
_BULLET = re.compile(r"^\s*(?:[-*>]\s*)+")
_LEADING_DATE = re.compile(r"^\((?P<date>[^()]*\d{4})\)\s*")
_VALIDITY = re.compile(r"\s*\(valid (?P<date>[^–)]*?\d{4})\s*–[^)]*\)")
_HOW_MANY = re.compile(r"^\s*how (many|much|old)\b")
_NUMBER = re.compile(
    r"\b(\d+(?:[.,]\d+)?|one|two|three|four|five|six|seven|eight|nine|ten|twelve|twenty)\b",
    re.IGNORECASE,
)
_WHEN = re.compile(r"^\s*(when|what (date|year|month|day|time)|how long ago|which (year|month))\b")
_YES_NO = re.compile(
    r"^\s*(is|are|was|were|do|does|did|would|could|can|will|has|have|had|should)\b"
)


@dataclass(frozen=True)
class _Line:
    text: str
    anchor: str | None
    speaker: str | None
    terms: frozenset[str]


@dataclass(frozen=True)
class _Index:
    lines: tuple[_Line, ...]
    idf: dict[str, float]
    speakers: frozenset[str]


@lru_cache(maxsize=32)
def _index(context: str) -> _Index:
    """Parse and index a context block once; raw contexts repeat for every question."""
    lines: list[_Line] = []
    anchor: str | None = None
    for raw in context.splitlines():
        header = _HEADER.match(raw)
        if header:
            anchor = header.group("date")
            continue
        if _TAG_LINE.match(raw):
            continue
        body, own_date = _strip_markup(raw)
        if not body:
            continue
        speaker = _SPEAKER.match(body)
        name = speaker.group("name") if speaker else None
        lines.append(_Line(body, own_date or anchor, name, frozenset(content_terms(body))))
    df = Counter(t for line in lines for t in line.terms)
    n = max(len(lines), 1)
    idf = {t: math.log(1 + n / c) for t, c in df.items()}
    speakers = frozenset(line.speaker for line in lines if line.speaker)
    return _Index(tuple(lines), idf, speakers)


def _strip_markup(raw: str) -> tuple[str, str | None]:
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


def _best_line(index: _Index, question: str) -> tuple[_Line | None, float]:
    """The best-matching line and the share of the question's weight it covers."""
    # Sorted: float sums must not depend on set order, which changes with the hash seed.
    q_terms = sorted(set(content_terms(question)))
    if not q_terms or not index.lines:
        return None, 0.0
    default_idf = math.log(1 + len(index.lines))
    weight = {t: index.idf.get(t, default_idf) for t in q_terms}
    total = sum(weight.values())
    named = {s for s in index.speakers if s.lower() in question.lower()}
    best, best_score = None, 0.0
    for line in index.lines:
        score = sum(weight[t] for t in q_terms if t in line.terms)
        if _spoken_by_someone_else(line, named):
            score *= OTHER_SPEAKER_PENALTY
        if score > best_score:
            best, best_score = line, score
    return best, best_score / total


def _spoken_by_someone_else(line: _Line, named: set[str]) -> bool:
    """The question names a speaker; this line is by another and does not mention them."""
    if not named or not line.speaker or line.speaker in named:
        return False
    return not any(n.lower() in line.text.lower() for n in named)


def _date_answer(line: _Line) -> str:
    explicit = _EXPLICIT_DATE.search(line.text)
    if explicit:
        return explicit.group(1).replace(",", "")
    anchor = session_date(line.anchor) if line.anchor else None
    if anchor is None:
        year = re.search(r"\b(19|20)\d{2}\b", line.text)
        return year.group(0) if year else ABSTAIN
    return first_relative(line.text, anchor) or format_date(anchor)


def _span_answer(line: _Line, question: str) -> str:
    """Up to MAX_ANSWER_WORDS words of the line that the question does not contain."""
    q_terms = set(content_terms(question))
    body = line.text.split(":", 1)[1] if line.speaker else line.text
    tokens = re.findall(r"[A-Za-z0-9][\w'-]*", body)
    keep, last_match = [], -1
    for i, tok in enumerate(tokens):
        low = tok.lower().split("'")[0]
        if stem(low) in q_terms:
            last_match = i
        elif low not in STOPWORDS:
            keep.append((i, tok))
    after = [t for i, t in keep if i > last_match]
    chosen = after if len(after) >= 2 else [t for _, t in keep]
    return " ".join(chosen[:MAX_ANSWER_WORDS]) or ABSTAIN


def answer(question: str, context: str) -> str:
    """The offline answer to `question` from `context` (see the module docstring)."""
    line, coverage = _best_line(_index(context), question)
    if line is None or coverage < MIN_COVERAGE:
        return ABSTAIN
    low = question.lower()
    if _WHEN.match(low):
        return _date_answer(line)
    if _YES_NO.match(low) and " or " not in low:
        return "Yes"
    number = _NUMBER.search(line.text.split(":", 1)[-1]) if _HOW_MANY.match(low) else None
    return number.group(1) if number else _span_answer(line, question)


class OfflineAnswerer:
    """A `ChatProvider` that answers extractively from the context in the messages."""

    model = MODEL_ID

    def __init__(self) -> None:
        stem("warm")  # load the stemmer now, not inside the first answer's latency

    def complete(
        self,
        messages: list[Message],
        *,
        tools: list[dict[str, object]] | None = None,
        prompt_version: str = "",
        options: CallOptions | None = None,
    ) -> ChatResult:
        """Answer the last user message from the system message's context block.

        `options` are accepted and ignored: the extractive answer is already one short line.
        """
        start = time.perf_counter()
        question = next(
            (str(m["content"]) for m in reversed(messages) if m.get("role") == "user"), ""
        )
        text = answer(question, extract_context(messages))
        return ChatResult(
            text=text, model=MODEL_ID, latency_ms=(time.perf_counter() - start) * 1000
        )
