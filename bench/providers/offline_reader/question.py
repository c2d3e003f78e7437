"""What kind of answer a question asks for, read from its wording alone.

The type picks the extraction rule (see `bench.providers.offline_answer`): a date, a
duration, a number, yes/no, a person, a place, a reason, a title (of a book, film, song
or game, when quoted), a feeling, a list of things, or a span.
"""

from __future__ import annotations

import re
from enum import Enum


class Kind(Enum):
    """Answer types the offline reader tells apart."""

    WHEN = "when"
    DURATION = "duration"
    COUNT = "count"
    YES_NO = "yes_no"
    WHO = "who"
    WHERE = "where"
    WHY = "why"
    TITLE = "title"
    FEELING = "feeling"
    LIST = "list"
    SPAN = "span"


_WHEN = re.compile(
    r"^\s*(?:when|(?:what|which) (?:date|year|month|day|time|week|weekend)|"
    r"in (?:what|which) (?:year|month))\b"
)
_DURATION = re.compile(r"^\s*(?:how long|for how long)\b")
_COUNT = re.compile(r"^\s*(?:how (?:many|much|old)|what (?:is|was) the (?:number|age))\b")
_YES_NO = re.compile(
    r"^\s*(?:is|are|was|were|do|does|did|would|could|can|will|has|have|had|should|might)\b"
)
_WHO = re.compile(r"^\s*(?:who|whom|whose)\b")
_WHERE = re.compile(
    r"^\s*(?:where|(?:what|which|in what|in which) (?:city|country|state|place|town|"
    r"location|park|restaurant|store|shop|school|beach|island|region|area)s?)\b"
)
_TITLE = re.compile(
    r"^\s*(?:what|which)(?: \w+)? (?:book|novel|movie|film|song|game|video game|show|"
    r"series|album|band|play|painting)\b"
)
_FEELING = re.compile(
    r"^\s*(?:how (?:did|does|do|is|was|were) .*\bfeel(?:s|ing)?\b|(?:what|which) (?:emotions?|"
    r"feelings?)\b|(?:what|how) .*\breact(?:ion|ed)?\b)"
)
_WHY = re.compile(r"^\s*(?:why|what (?:made|motivated|inspired|led|caused|prompted))\b")
_PHOTO = re.compile(r"\b(?:photos?|pictures?|pics?|images?|photographs?)\b")
_HEAD = re.compile(r"^\s*(?:what|which)\s+(?:(?:kinds?|types?|sorts?) of\s+)?(?P<rest>.*)")
_PLURAL = re.compile(r"^[a-z-]+(?:ies|[^s'u]s)$")
_VERBS_TEXT = "is are was were do does did has have had will would can could"
_VERBS = frozenset(_VERBS_TEXT.split())
_LIST_WORDS = re.compile(r"\b(?:both|all the|ways|things|activities|hobbies|names)\b")
_NOT_NOUNS_TEXT = "does has was is this its his hers yours ours theirs"
_NOT_NOUNS = frozenset(_NOT_NOUNS_TEXT.split())


def kind_of(question: str) -> Kind:  # noqa: C901
    """The answer type of `question` (first matching rule, in the order of `Kind`)."""
    low = " ".join(question.lower().split())
    if _WHEN.match(low):
        return Kind.WHEN
    if _DURATION.match(low):
        return Kind.DURATION
    if _COUNT.match(low):
        return Kind.COUNT
    if _YES_NO.match(low) and " or " not in low:
        return Kind.YES_NO
    if _WHO.match(low):
        return Kind.WHO
    if _WHERE.match(low):
        return Kind.WHERE
    if _WHY.match(low):
        return Kind.WHY
    if _TITLE.match(low):
        return Kind.TITLE
    if _FEELING.match(low):
        return Kind.FEELING
    if asks_for_list(low):
        return Kind.LIST
    return Kind.SPAN


def asks_for_list(low: str) -> bool:
    """The question asks for several things: a plural head noun or a list word."""
    head = _HEAD.match(low)
    if head:
        for word in re.findall(r"[a-z'/-]+", head.group("rest"))[:2]:
            if word in _VERBS:
                break
            if any(_PLURAL.match(w) and w not in _NOT_NOUNS for w in word.split("/")):
                return True
    return bool(_LIST_WORDS.search(low)) and low.startswith(("what", "which"))


def asks_about_photo(question: str) -> bool:
    """The question is about a photo someone shared ("What did Nate share a photo of?")."""
    return bool(_PHOTO.search(question.lower()))
