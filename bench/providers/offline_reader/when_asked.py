"""The date a question is pinned to ("… on 7 July, 2023?", "… in August 2023?").

LoCoMo questions often name the session's date instead of repeating its words ("What
did Maria plan to do later on the evening of 7 July, 2023?"). The date's words never
occur in the lines themselves (the date lives in the session header), so as plain terms
they only lower every line's coverage. `index.rank` instead drops them from the term
weights and matches the date against each line's anchor: a line said on that day (or in
that month, for a month-only date) scores the date's IDF weight, computed like any
other term's from how many lines match.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date
from functools import lru_cache

from bench.text import content_terms, session_date

_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_DAY_FIRST = re.compile(rf"\b{_DAY}\s+(?P<month>{_MONTHS}),?\s+(?P<year>\d{{4}})\b", re.I)
_MONTH_FIRST = re.compile(rf"\b(?P<month>{_MONTHS})\s+{_DAY},?\s+(?P<year>\d{{4}})\b", re.I)
_MONTH_YEAR = re.compile(rf"\b(?P<month>{_MONTHS}),?\s+(?P<year>\d{{4}})\b", re.I)
_MONTH_NUMBER = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}


@dataclass(frozen=True)
class AskedDate:
    """A date range a question names and the question terms its words make."""

    first: date
    """First day of the range (the day itself for a full date)."""
    last: date
    """Last day of the range."""
    terms: frozenset[str]
    """Stemmed content terms of the date's text, left out of the question's term weights."""

    def holds(self, anchor: str | None) -> bool:
        """True when a line's anchor (as written) falls inside the range."""
        day = anchor_day(anchor) if anchor else None
        return day is not None and self.first <= day <= self.last


@lru_cache(maxsize=4096)
def anchor_day(anchor: str) -> date | None:
    """The calendar date of a line's anchor text (memoised: anchors repeat per session)."""
    return session_date(anchor)


@lru_cache(maxsize=4096)
def asked_date(question: str) -> AskedDate | None:
    """The day or month the question names, if any (a bare year is too broad to pin)."""
    for pattern in (_DAY_FIRST, _MONTH_FIRST):
        match = pattern.search(question)
        if match:
            day = _safe_date(match.group("year"), match.group("month"), match.group("day"))
            if day:
                return AskedDate(day, day, frozenset(content_terms(match.group(0))))
    match = _MONTH_YEAR.search(question)
    if match:
        first = _safe_date(match.group("year"), match.group("month"), "1")
        if first:
            end = calendar.monthrange(first.year, first.month)[1]
            last = first.replace(day=end)
            return AskedDate(first, last, frozenset(content_terms(match.group(0))))
    return None


def _safe_date(year: str, month: str, day: str) -> date | None:
    try:
        return date(int(year), _MONTH_NUMBER[month.lower()], int(day))
    except ValueError:
        return None
