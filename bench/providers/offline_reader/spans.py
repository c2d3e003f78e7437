"""Answer spans cut from the chosen sentence, by answer type.

A sentence is tokenised into words and punctuation. The default span is the clause
after the last word the question also contains (the question's words are what it
already knows; what follows them is new), cut at the next clause mark, with leading
function words dropped and at most MAX_SPAN_WORDS words kept. When nothing follows,
the clause before the first question word is used instead.
"""

from __future__ import annotations

import re

from bench.text import STOPWORDS, content_terms, stem

MAX_SPAN_WORDS = 10
CONTENT_WORDS = 8
_TOKEN = re.compile(r"[A-Za-z0-9][\w'’-]*|[.,;:!?()\"“”]")
_BOUNDARY = frozenset(".;:!?()")
_LEADING_TEXT = """to a an the is was are were be been being that it it's its i i'm i've i'd my
    me we
    we're our you you're your so really very just about of for on in at with by from this
    these those and but also too like have has had do did does am totally actually always
    all up some there there's which who what when how been lately recently currently now
    he she his her they them their he's she's they're got get going gonna would could
    will can yes yeah oh well then"""
_LEADING = frozenset(_LEADING_TEXT.split())
_FILLER_TEXT = """wow hey hi thanks thank awesome cool great amazing sure totally yeah haha lol
    definitely actually pretty super glad guess congrats oops oof woohoo woah whoa yay yep yup
    nope ok okay hmm phew ah aw aww omg gosh btw anyway anyways plus
    photo photos pic pics picture pictures know think thought mean tell told say said hear heard
    talk talked chat chatting"""
_FILLER = frozenset(_FILLER_TEXT.split())
_WHEN_SAID_TEXT = """last yesterday today tonight tomorrow lately recently ago week weeks weekend
    weekends month months year years monday tuesday wednesday thursday friday saturday sunday
    morning evening night"""
_WHEN_SAID = frozenset(_WHEN_SAID_TEXT.split())
_NUMBER = re.compile(
    r"\b(\d+(?:[.,]\d+)?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"fifteen|twenty|thirty|forty|fifty|hundred|a couple|a few|several)\b",
    re.IGNORECASE,
)
_DURATION = re.compile(
    _NUMBER.pattern
    + r"(?:\s+(?:more|whole|full))?\s+(?P<unit>(?:year|month|week|day|hour|minute)s?)"
    r"(?P<ago>\s+ago)?",
    re.IGNORECASE,
)
_NAME = re.compile(r"(?<![.!?]\s)\b([A-Z][a-z'’-]+(?:\s+(?:[A-Z][a-z'’-]+|of|the|de))*)")
_PLACE = re.compile(
    r"\b(?:in|at|to|from|near|visit(?:ed|ing)?)\s+((?:the\s+)?[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)*)"
)
_CAPTION = re.compile(r"^an? (?:photo|photograph|photography|picture|image)(?: of)?\s+", re.I)
_REASON = re.compile(r"\b(?:because|since|so that|as|to)\b\s+(.*)", re.IGNORECASE)


def tokens(text: str) -> list[str]:
    """Words and punctuation marks of `text`, in order."""
    return _TOKEN.findall(text)


def _is_question_word(tok: str, q_terms: frozenset[str]) -> bool:
    low = tok.lower().split("'")[0].split("’")[0]
    return bool(low) and (stem(low) in q_terms or low in q_terms)


def clause_span(sentence: str, q_terms: frozenset[str], limit: int = MAX_SPAN_WORDS) -> str:
    """The clause of `sentence` after its last question word (see the module docstring)."""
    toks = tokens(sentence)
    hits = [i for i, t in enumerate(toks) if _is_question_word(t, q_terms)]
    if hits:
        after = _clause(toks[hits[-1] + 1 :], q_terms, limit)
        if after:
            return after
        before = _clause(list(reversed(toks[: hits[0]])), q_terms, limit)
        if before:
            return " ".join(reversed(before.split()))
    return _clause(toks, q_terms, limit)


def _clause(toks: list[str], q_terms: frozenset[str], limit: int) -> str:
    """Words from the start of `toks` to the first clause mark, trimmed of function words."""
    words: list[str] = []
    for tok in toks:
        if tok in _BOUNDARY:
            if any(w.lower() not in _LEADING for w in words):
                break
            words = []
            continue
        if not words and (tok.lower() in _LEADING or tok.lower() in _FILLER):
            continue
        if _is_question_word(tok, q_terms):
            continue
        words.append(tok)
    while words and words[-1].lower() in _LEADING:
        words.pop()
    return " ".join(words[:limit])


def content_span(sentence: str, q_terms: frozenset[str], limit: int = CONTENT_WORDS) -> str:
    """The sentence's content words that the question does not contain, in order.

    Words that only place the telling in time ("last week", "yesterday") are left out:
    the anchor dates the line, and a question that is not a "when" question never asks
    for them (date answers come from `dates`, not from here).
    """
    kept = []
    for tok in tokens(sentence):
        low = re.split("['’]", tok.lower())[0]
        if not tok[0].isalnum() or low in STOPWORDS or low in _FILLER or low in _WHEN_SAID:
            continue
        if not _is_question_word(tok, q_terms):
            kept.append(tok)
    return " ".join(kept[:limit])


def number_span(sentence: str) -> str | None:
    """The first number (digits or words) of the sentence."""
    match = _NUMBER.search(sentence)
    return match.group(1) if match else None


def duration_span(sentence: str) -> str | None:
    """The first `<number> <unit>[ ago]` of the sentence, e.g. `4 years`, `10 years ago`."""
    match = _DURATION.search(sentence)
    return " ".join(match.group(0).split()) if match else None


def name_span(sentence: str, question: str, exclude: set[str]) -> str | None:
    """Capitalised names in the sentence that the question does not already contain."""
    q_terms = frozenset(content_terms(question))
    for match in _NAME.finditer(sentence):
        name = match.group(1)
        first = re.split("['’]", name.split()[0].lower())[0]
        if first in STOPWORDS or first in _FILLER or first in _LEADING or name in exclude:
            continue
        if all(stem(w.lower()) in q_terms for w in name.split()):
            continue
        return name
    return None


def place_span(sentence: str, question: str) -> str | None:
    """A capitalised place after in/at/to/from in the sentence, not in the question."""
    q_terms = frozenset(content_terms(question))
    for match in _PLACE.finditer(sentence):
        place = match.group(1)
        if not all(stem(w.lower()) in q_terms for w in re.findall(r"[\w'’-]+", place)):
            return place
    return None


def reason_span(sentence: str, q_terms: frozenset[str]) -> str | None:
    """The clause after because/since/so that/to, if the sentence gives a reason."""
    match = _REASON.search(sentence)
    return _clause(tokens(match.group(1)), q_terms, MAX_SPAN_WORDS + 2) if match else None


def caption_text(sentence: str) -> str | None:
    """What a shared photo shows (`a photo of a red kite` → `a red kite`); None if no caption.

    `index.sentences` splits `[shares a photo: …]` off as its own sentence, which then
    opens with `a photo of`.
    """
    match = _CAPTION.match(sentence)
    return sentence[match.end() :] if match else None


_ENUMERATION = re.compile(r",|;|\s+(?:and|or|as well as)\s+", re.IGNORECASE)


def list_items(sentence: str, q_terms: frozenset[str], limit: int) -> list[str]:
    """The items a sentence enumerates, each cut to its new content words.

    "I play the clarinet and the violin" lists two things; as one span they would match
    only one item of a list answer. A sentence without commas or "and"/"or" gives one item.
    """
    parts = [content_span(p, q_terms, limit) for p in _ENUMERATION.split(sentence)]
    return [p for p in parts if p]


def enumerated_span(sentence: str, q_terms: frozenset[str], limit: int = CONTENT_WORDS) -> str:
    """`content_span` with the sentence's own enumeration kept: items joined by commas.

    The same words as `content_span` (at most `limit` in all), so a single answer reads
    the same; a list the sentence makes stays a list.
    """
    out: list[str] = []
    left = limit
    for item in list_items(sentence, q_terms, limit):
        words = item.split()[:left]
        if not words:
            break
        out.append(" ".join(words))
        left -= len(words)
    return ", ".join(out)


_QUOTED = re.compile(r"[\"“]([^\"“”]{2,80})[\"”]")


def title_span(sentence: str, question: str) -> str | None:
    """A quoted title in the sentence ("Charlotte's Web"), one the question does not name.

    Titles of books, films, songs and games are often written in quotes. (Capitalised
    words were tried as well: they helped on the dev conversations and hurt on the held-out
    ones, so a title without quotes is left to the plain span.)
    """
    q_terms = frozenset(content_terms(question))
    for match in _QUOTED.finditer(sentence):
        title = match.group(1).strip()
        if not all(stem(w.lower()) in q_terms for w in re.findall(r"[\w'’]+", title)):
            return title
    return None
