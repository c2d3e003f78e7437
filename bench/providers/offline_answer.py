"""The embedded offline answerer: deterministic, extractive, no model and no network.

It reads the same messages an LLM would get (rules + context block + question) and
answers from the context alone (parts in `bench.providers.offline_reader`):

1. parse the context into dated, speaker-tagged lines and sentences; lines opening with
   a tag (`<FACTS>`, `<ANSWER_TYPE>…`) are wrappers or instructions, never answers, and a
   turn repeated by overlapping windows counts once (`index`);
2. rank lines by IDF-weighted overlap of stemmed content words with the question,
   a date the question names matched against the lines' session dates
   (`when_asked`), down-weighting lines by another speaker than the one the question
   names (a name used only to address someone does not count as naming them) and lines
   that only ask a question (`index.rank`), and in a context whose passages go back in
   time (rag's windows, in order of retrieval score) lines of earlier passages a little
   more (`index.PASSAGE_PRIOR`); for "when" questions lines that say when score more
   (`timed_first`);
3. if the best line covers too little of the question (`min_coverage`), or the question
   attributes to one speaker what the other said, answer `not mentioned`; a "when"
   question no line shares a word with is dated from the first passage of a
   relevance-ordered context (`first_passage`), else abstains;
4. read the answer type from the question's wording (`question.kind_of`) and cut the
   answer from the sentence holding the most question weight (statements before
   questions; the reply when the line only asks): a date in LoCoMo's gold form for
   "when" (a month or a year when asked for one), `<n> <unit>` for "how long", a number
   (or the count of sessions that tell it) for "how many", "Yes"/"No", a name or person
   noun for "who", a place or place noun for "where", a reason for "why", feeling words
   for "how did … feel", a quoted title for "what book/film/song", the items of the
   several best lines for list questions, else the sentence's new words with its own
   enumeration kept as items (`dates`, `spans`, `nouns`). A typed span missing from the
   best line is looked for in the next-ranked lines.

Its numbers measure what each arm's context makes reachable to a simple reader;
they are labelled offline and never presented as LLM-judged results.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping

from bench.providers.answer_context import ABSTAIN, extract_context
from bench.providers.base import CallOptions, Message, Tool
from bench.providers.offline_reader import spans
from bench.providers.offline_reader.dates import coarsen, date_answer, says_when
from bench.providers.offline_reader.index import (
    Index,
    Line,
    Ranked,
    about_someone_else,
    index,
    named_speakers,
    question_weights,
    rank,
    sentences,
)
from bench.providers.offline_reader.nouns import feelings, person_noun, place_noun
from bench.providers.offline_reader.question import Kind, asks_about_photo, kind_of
from bench.text import content_terms, stem
from bench.types import ChatResult

MODEL_ID = "offline-extractive"
MIN_COVERAGE = 0.2
"""Below this coverage of the question's weight the best line is no evidence: abstain."""
MIN_COVERAGE_YES_NO = 0.1
LIST_SHARE = 0.45
"""A list answer takes every line scoring at least this share of the best line's score."""
LIST_MAX = 12
LIST_ITEM_WORDS = 5
FURTHER_LINES = 6
"""A typed span not in the best line is looked for in this many next-ranked lines."""
TIME_BONUS = 0.5
"""Share more score a line that says when (`dates.says_when`) gets for a "when" question."""
COUNT_SHARE = 0.6
"""A line counts as another occurrence when it scores this share of the best line."""
_COUNTS_EVENTS = re.compile(r"^\s*how many (?:times|\w+s)\b(?! (?:old|passed|lapsed))")
MAX_OCCURRENCES = 9
_NEGATION = re.compile(r"\b(?:not|never|no)\b|n't\b", re.IGNORECASE)


def answer(question: str, context: str) -> str:
    """The offline answer to `question` from `context` (see the module docstring)."""
    kind = kind_of(question)
    ranked = rank(index(context), question)
    if kind is Kind.WHEN:
        ranked = timed_first(ranked)
    idx = index(context)
    if not ranked and kind is Kind.WHEN and idx.by_relevance:
        ranked = first_passage(idx)  # a date can be read without shared words
    elif not ranked or ranked[0].coverage < min_coverage(kind):
        return ABSTAIN
    if about_someone_else(ranked[0].line, named_speakers(idx, question), idx.speakers):
        return ABSTAIN  # the question attributes to one speaker what the other said
    q_terms = frozenset(content_terms(question)) | speaker_terms(idx)
    weights = question_weights(idx, question)
    best = _reply_to(idx, ranked[0].line, weights)
    sentence = best_sentence(best, weights)
    found = _by_kind(kind, question, q_terms, best, sentence, ranked, weights)
    return found if found and any(ch.isalnum() for ch in found) else ABSTAIN


def first_passage(idx: Index) -> list[Ranked]:
    """The lines of the first passage of a context in order of relevance, in order.

    When no line shares a word with a "when" question, the retriever (which matched on
    meaning, not words) still put the passage it judged closest first; its date is the
    best one the context offers. Other kinds still abstain: their answer is a span of
    the line, and a line sharing no word with the question gives no span to trust.
    """
    return [Ranked(line, 1.0, 0.0) for line in idx.lines if line.passage == 0]


def speaker_terms(idx: Index) -> frozenset[str]:
    """The speakers' names as terms: spans leave them out like the question's own words.

    The two speakers are who every line is by or about ("Caroline is creating a library
    for when Caroline has kids"); their names are never the new part of an answer (a
    "who" answer is cut by `spans.name_span`, which reads the sentence itself).
    """
    return frozenset(t for s in idx.speakers for t in content_terms(s))


def timed_first(ranked: list[Ranked]) -> list[Ranked]:
    """For a "when" question, lines that say when something happened score TIME_BONUS more.

    "I went to a support group yesterday" dates the event; a later "the support group
    was great" only mentions it, and its session date would be the wrong answer.
    """
    bonus = [
        Ranked(r.line, r.score * (1 + TIME_BONUS), r.coverage) if says_when(r.line.body) else r
        for r in ranked
    ]
    return sorted(bonus, key=lambda r: (-r.score, r.line.position))


def min_coverage(kind: Kind) -> float:
    """The least share of the question's weight the best line must cover to be answered from.

    A yes/no question (MIN_COVERAGE_YES_NO) restates its whole premise ("Would Caroline
    likely have Dr. Seuss books on her bookshelf?"), so its best line covers less of it
    than the best line of a wh-question does, while still bearing on the answer.
    """
    return MIN_COVERAGE_YES_NO if kind is Kind.YES_NO else MIN_COVERAGE


def _reply_to(idx: Index, line: Line, weights: Mapping[str, float]) -> Line:
    """The next speaker's line when the best line only asks the question (else the line)."""
    if not best_sentence(line, weights).endswith("?") or line.position + 1 >= len(idx.lines):
        return line
    reply = idx.lines[line.position + 1]
    return reply if reply.speaker != line.speaker else line


def _by_kind(  # noqa: C901
    kind: Kind,
    question: str,
    q_terms: frozenset[str],
    line: Line,
    sentence: str,
    ranked: list[Ranked],
    weights: Mapping[str, float],
) -> str | None:
    """The answer of the given type from the best line and sentence (None: nothing fits).

    A typed span (duration, name, place) missing from the chosen sentence is looked for
    in the rest of its line, then in the best sentences of the next-ranked lines
    (`_further`): the answer of the asked type is often one line away from the line
    that shares the question's words.
    """
    texts = [sentence, line.body]
    if kind is Kind.WHEN:
        day = date_answer(texts, line.anchor)
        return coarsen(day, question) if day else None
    if kind is Kind.YES_NO:
        return "No" if _NEGATION.search(sentence) else "Yes"
    if kind is Kind.LIST:
        return _list_answer(ranked, q_terms, weights)
    found = None
    further = _further(ranked, weights)
    if kind is Kind.DURATION:
        found = _first(spans.duration_span, [*texts, *further])
    elif kind is Kind.COUNT:
        found = _first(spans.number_span, texts) or _occurrences(question, ranked)
    elif kind is Kind.WHO:
        exclude = {line.speaker} if line.speaker else set()
        found = spans.name_span(sentence, question, exclude) or person_noun(sentence, q_terms)
        found = found or _first(lambda t: spans.name_span(t, question, exclude), [*texts, *further])
    elif kind is Kind.WHERE:
        found = spans.place_span(sentence, question) or place_noun(sentence, q_terms)
        found = found or _first(lambda t: spans.place_span(t, question), [*texts, *further])
    elif kind is Kind.FEELING:
        found = _first(lambda t: feelings(t, q_terms), [*texts, *further])
    elif kind is Kind.TITLE:
        found = _first(lambda t: spans.title_span(t, question), [*texts, *further])
    elif kind is Kind.WHY:
        found = spans.reason_span(sentence, q_terms)
    return found or _plain_span(question, q_terms, line, sentence)


def _further(ranked: list[Ranked], weights: Mapping[str, float]) -> list[str]:
    """The best sentences of the FURTHER_LINES lines ranked after the best one."""
    return [best_sentence(r.line, weights) for r in ranked[1 : 1 + FURTHER_LINES]]


def _plain_span(question: str, q_terms: frozenset[str], line: Line, sentence: str) -> str:
    """The answer when no typed rule fits: the new words of the chosen sentence.

    Where the sentence enumerates ("kids' books- classics, stories from different
    cultures, educational books") its items stay apart, comma-separated, as a list
    answer's would (`spans.enumerated_span`).

    A question about a shared photo ("What did Nate share a photo of…?") reads the
    photo's caption instead, when the chosen line has one: the caption says what the
    photo shows, the speaker's words around it rarely do.
    """
    if asks_about_photo(question):
        parts = sentences(line.body)
        caption = next((c for p in parts if (c := spans.caption_text(p))), None)
        if caption:
            return spans.content_span(caption, q_terms)
    return spans.enumerated_span(sentence, q_terms) or spans.content_span(line.body, q_terms)


def _first(pick: Callable[[str], str | None], texts: list[str]) -> str | None:
    """The first span `pick` finds in `texts`, in order (None: none)."""
    for text in texts:
        found = pick(text)
        if found:
            return found
    return None


def best_sentence(line: Line, weights: Mapping[str, float]) -> str:
    """The sentence of the line holding the most question weight (first on ties).

    `weights` are the question terms' IDF weights (`index.question_weights`): a rare
    question word ("clarinet") places the answer better than a common one ("love").
    A statement holding any question word is preferred to a sentence that asks a
    question: a question back rarely answers (`_reply_to` follows it to the reply when
    the line has nothing else).
    """
    parts = sentences(line.body)
    best, best_key = parts[0], (False, -1.0)
    for sentence in parts:
        weight = sum(weights.get(t, 0.0) for t in set(content_terms(sentence)))
        key = (weight > 0 and not sentence.endswith("?"), weight)
        if key > best_key:
            best, best_key = sentence, key
    return best


def _occurrences(question: str, ranked: list[Ranked]) -> str | None:
    """For "how many times/things …" with no number said: the sessions that mention it.

    Something done several times is told once per session it happened in, so the count
    is the number of distinct session dates among the lines scoring at least
    COUNT_SHARE of the best line, when the question counts events. It is written in
    digits: a number word ("two") could also be read from the prompt's own wording, and
    the echo scan (`tests/providers/test_offline_echo.py`) rightly cannot tell the two apart.
    """
    if not _COUNTS_EVENTS.match(question.lower()):
        return None
    floor = ranked[0].score * COUNT_SHARE
    days = {r.line.anchor for r in ranked if r.score >= floor and r.line.anchor}
    return str(len(days)) if 0 < len(days) <= MAX_OCCURRENCES else None


def _list_answer(
    ranked: list[Ranked], q_terms: frozenset[str], weights: Mapping[str, float]
) -> str | None:
    """Spans of the best lines (score ≥ LIST_SHARE of the best), comma-joined, deduplicated."""
    floor = ranked[0].score * LIST_SHARE
    items: list[str] = []
    for r in ranked[:LIST_MAX]:
        if r.score < floor:
            break
        for item in spans.list_items(best_sentence(r.line, weights), q_terms, LIST_ITEM_WORDS):
            if item.lower() not in (i.lower() for i in items):
                items.append(item)
    return ", ".join(items) or None


class OfflineAnswerer:
    """A `ChatProvider` that answers extractively from the context in the messages."""

    model = MODEL_ID

    def __init__(self) -> None:
        stem("warm")  # load the stemmer now, not inside the first answer's latency

    def complete(
        self,
        messages: list[Message],
        *,
        tools: list[Tool] | None = None,
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
