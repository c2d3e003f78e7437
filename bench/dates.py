"""Relative dates ("yesterday", "two weeks ago") resolved against the session date.

Shared by the engine's fact extractor and the offline answerer.

`resolve_dates("I went there yesterday", date(2023, 5, 8))` returns
`("I went there yesterday (7 May 2023)", ["7 May 2023"])`. Arithmetic is done with
python-dateutil's `relativedelta`; forms follow LoCoMo's gold answers
("7 May 2023", "the week before 9 June 2023", "May 2023", "2022").
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

from dateutil.relativedelta import FR, MO, SA, SU, TH, TU, WE, relativedelta

from bench.text import format_date

_WEEKDAYS = {
    "monday": MO,
    "tuesday": TU,
    "wednesday": WE,
    "thursday": TH,
    "friday": FR,
    "saturday": SA,
    "sunday": SU,
}
_COUNTS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "a couple of": 2,
    "couple of": 2,
}
_FEW = ("a few", "few", "several")


@dataclass(frozen=True)
class Resolved:
    """One relative expression: the absolute form and whether it names a past point."""

    text: str
    """The absolute form of the expression, e.g. a formatted date."""
    past: bool
    """True when the expression names a point before the anchor date."""
    exact: bool
    """True for a day, month or year; False for a span such as 'the week before …'."""


def _day(d: date, days: int) -> str:
    return format_date(d + relativedelta(days=days))


def _month(d: date) -> str:
    return d.strftime("%B %Y")


_FIXED: dict[str, Callable[[date], Resolved]] = {
    "the day before yesterday": lambda d: Resolved(_day(d, -2), True, True),
    "yesterday": lambda d: Resolved(_day(d, -1), True, True),
    "last night": lambda d: Resolved(_day(d, -1), True, True),
    "today": lambda d: Resolved(format_date(d), True, True),
    "tonight": lambda d: Resolved(format_date(d), False, True),
    "this morning": lambda d: Resolved(format_date(d), True, True),
    "tomorrow": lambda d: Resolved(_day(d, 1), False, True),
    "last weekend": lambda d: Resolved(f"the weekend before {format_date(d)}", True, False),
    "next weekend": lambda d: Resolved(f"the weekend after {format_date(d)}", False, False),
    "last week": lambda d: Resolved(f"the week before {format_date(d)}", True, False),
    "next week": lambda d: Resolved(f"the week after {format_date(d)}", False, False),
    "last month": lambda d: Resolved(_month(d - relativedelta(months=1)), True, True),
    "this month": lambda d: Resolved(_month(d), True, True),
    "next month": lambda d: Resolved(_month(d + relativedelta(months=1)), False, True),
    "last year": lambda d: Resolved(str(d.year - 1), True, True),
    "this year": lambda d: Resolved(str(d.year), True, True),
    "next year": lambda d: Resolved(str(d.year + 1), False, True),
}
_COUNT_WORDS = "|".join(sorted([*_COUNTS, *_FEW], key=len, reverse=True))
_PATTERN = re.compile(
    r"\b(?:"
    + "|".join(re.escape(p) for p in sorted(_FIXED, key=len, reverse=True))
    + r"|(?:last|next) (?:"
    + "|".join(_WEEKDAYS)
    + r")"
    + r"|(?:\d+|"
    + _COUNT_WORDS
    + r") (?:day|week|month|year)s? ago"
    + r")\b",
    re.IGNORECASE,
)


def _ago(phrase: str, anchor: date) -> Resolved:
    amount, unit = phrase.rsplit(" ", 2)[0], phrase.rsplit(" ", 2)[1].rstrip("s")
    if amount in _FEW:
        return Resolved(f"{amount} {unit}s before {format_date(anchor)}", True, False)
    n = int(amount) if amount.isdigit() else _COUNTS[amount]
    then = anchor - relativedelta(**{f"{unit}s": n})
    if unit == "year":
        return Resolved(str(then.year), True, True)
    if unit == "month":
        return Resolved(_month(then), True, True)
    return Resolved(format_date(then), True, unit == "day")


def resolve_phrase(phrase: str, anchor: date) -> Resolved:
    """The absolute meaning of one relative phrase said on `anchor`."""
    low = " ".join(phrase.lower().split())
    if low in _FIXED:
        return _FIXED[low](anchor)
    direction, _, day = low.partition(" ")
    if day in _WEEKDAYS:
        step = -1 if direction == "last" else 1
        then = anchor + relativedelta(days=step, weekday=_WEEKDAYS[day](step))
        return Resolved(format_date(then), step < 0, True)
    return _ago(low, anchor)


def first_relative(text: str, anchor: date) -> str | None:
    """The absolute form of the first relative date in `text` said on `anchor`, if any."""
    match = _PATTERN.search(text)
    return resolve_phrase(match.group(0), anchor).text if match else None


def resolve_dates(text: str, anchor: date | None) -> tuple[str, list[Resolved]]:
    """`text` with each relative date followed by its absolute form in brackets."""
    if anchor is None:
        return text, []
    found: list[Resolved] = []

    def annotate(match: re.Match[str]) -> str:
        resolved = resolve_phrase(match.group(0), anchor)
        found.append(resolved)
        return f"{match.group(0)} ({resolved.text})"

    return _PATTERN.sub(annotate, text), found
