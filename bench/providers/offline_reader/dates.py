"""Date answers for "when" questions, written the way LoCoMo's gold answers are.

Order of evidence in the chosen sentence (then its whole line): an absolute form a
memory arm already wrote beside a relative phrase (`last week (the week before 9 June
2023)`); a relative phrase resolved against the line's date (`last Friday` said on 15
July 2023 → `the Friday before 15 July 2023`, the gold's own form; `yesterday` → the
day before); an explicit date in the text; a bare year; else the line's date itself.
"""

from __future__ import annotations

import re
from datetime import date

from bench.dates import first_relative
from bench.text import format_date, session_date

_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
_EXPLICIT = re.compile(
    rf"\b(\d{{1,2}}(?:st|nd|rd|th)? (?:{_MONTHS}),? \d{{4}}|"
    rf"(?:{_MONTHS}) \d{{1,2}}(?:st|nd|rd|th)?,? \d{{4}}|(?:{_MONTHS}),? \d{{4}})\b"
)
_ANNOTATED = re.compile(
    r"\((?P<text>(?:the (?:week|weekend|\w+day) (?:before|after)|\w+ (?:days|weeks|months) "
    rf"before) \d{{1,2}} (?:{_MONTHS}) \d{{4}})\)",
    re.IGNORECASE,
)
_LAST_WEEKDAY = re.compile(
    r"\blast (monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b", re.IGNORECASE
)
_WEEKS_AGO = re.compile(r"\b(a|one|two|three|four|\d) (week|weekend)s? ago\b", re.IGNORECASE)
_YEAR = re.compile(r"\b(?:19|20)\d{2}\b")


def date_answer(texts: list[str], anchor_text: str | None) -> str | None:
    """The date `texts` (best sentence first, then its line) give, or None."""
    anchor = session_date(anchor_text) if anchor_text else None
    for text in texts:
        found = _annotated(text) or _relative(text, anchor) or _explicit(text)
        if found:
            return found
    for text in texts:
        year = _YEAR.search(text)
        if year:
            return year.group(0)
    return format_date(anchor) if anchor else None


def _annotated(text: str) -> str | None:
    match = _ANNOTATED.search(text)
    return match.group("text") if match else None


def _relative(text: str, anchor: date | None) -> str | None:
    if anchor is None:
        return None
    weekday = _LAST_WEEKDAY.search(text)
    if weekday:
        return f"the {weekday.group(1).capitalize()} before {format_date(anchor)}"
    weeks = _WEEKS_AGO.search(text)
    if weeks:
        count, unit = weeks.group(1).lower(), weeks.group(2).lower()
        lead = "the" if count in ("a", "one") else count
        plural = "" if lead == "the" else "s"
        return f"{lead} {unit}{plural} before {format_date(anchor)}"
    return first_relative(text, anchor) or _season(text, anchor)


_SEASON = re.compile(r"\b(last|this|next) (summer|winter)\b", re.IGNORECASE)
_SEASON_LAST_MONTH = {"summer": 8, "winter": 2}


def _season(text: str, anchor: date) -> str | None:
    """`last summer` said in May 2023 → `summer 2022` (in October 2023 → `summer 2023`).

    A season is named by the year it falls in (winter by the year of its January), the
    form LoCoMo's gold answers use; `last` is the latest one that has ended by the anchor
    date, `this` the one of the anchor's year, `next` the first one not yet begun.
    """
    match = _SEASON.search(text)
    if not match:
        return None
    which, season = match.group(1).lower(), match.group(2).lower()
    ended = anchor.month > _SEASON_LAST_MONTH[season]
    year = anchor.year
    if which == "last":
        year -= 0 if ended else 1
    elif which == "next":
        year += 1 if ended or season == "winter" else 0
    return f"{season} {year}"


def _explicit(text: str) -> str | None:
    match = _EXPLICIT.search(text)
    if not match:
        return None
    return re.sub(r"(\d)(?:st|nd|rd|th)\b", r"\1", match.group(1)).replace(",", "")


_TIME_PHRASE = re.compile(
    rf"\b(?:yesterday|today|tonight|tomorrow|ago|last|next|this (?:week|weekend|month|year|"
    rf"morning|summer|winter|spring|fall)|since|(?:19|20)\d{{2}}|{_MONTHS})\b",
    re.IGNORECASE,
)


def says_when(text: str) -> bool:
    """The text places something in time (a relative phrase, a month or a year)."""
    return bool(_TIME_PHRASE.search(text))


_MONTH_YEAR = re.compile(rf"\b({_MONTHS}) (\d{{4}})\b")
_GRAIN = re.compile(r"\b(?:what|which) (?P<grain>month|year)\b|\bin which month's\b")


def coarsen(answer: str, question: str) -> str:
    """The date answer cut to the grain the question asks for.

    "Which month …?" → `May 2023`, "Which year …?" → `2023`; other questions keep the
    answer as it is.
    """
    asked = _GRAIN.search(question.lower())
    if not asked:
        return answer
    if asked.group("grain") == "year":
        year = _YEAR.findall(answer)
        return year[-1] if year else answer
    month = _MONTH_YEAR.search(answer)
    return f"{month.group(1)} {month.group(2)}" if month else answer
