"""Small text utilities for the offline components: terms, stems and session dates."""

from __future__ import annotations

import importlib.abc
import re
import sys
from datetime import date, datetime
from functools import lru_cache
from typing import Any

from dateutil import parser as date_parser

_STOPWORD_TEXT = """a about above after again against all am an and any are as at be because been
before being below between both but by can could did do does doing down during each few for from
further had has have having he her here hers herself him himself his how i if in into is it its
itself just me more most my myself no nor not now of off on once only or other our ours out over
own same she should so some such than that the their theirs them then there these they this those
through to too under until up very was we were what when where which while who whom why will with
would you your yours yourself also really yeah oh hey like get got gonna wanna lot thing things
much many one ever going go went been"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_WORD = re.compile(r"[A-Za-z0-9]+(?:'[A-Za-z]+)?")
_DATE_IN_HEADER = re.compile(r"(\d{1,2} [A-Z][a-z]+,? \d{4})")


class _HideScipy(importlib.abc.MetaPathFinder):
    """Makes `import scipy...` fail while nltk loads (see `_stemmer`)."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name == "scipy" or name.startswith("scipy."):
            raise ImportError(f"{name} is hidden while nltk loads")


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    """The Porter stemmer of nltk, imported without scipy when scipy is not loaded yet.

    `import nltk` imports scipy.stats (~1.2 s of CPU) only for two collocation
    statistics (`fisher_exact`, `betai`), each behind `except ImportError`; armbench
    uses neither, so scipy is hidden while nltk loads and stays importable afterwards.
    """
    hide = "nltk" not in sys.modules and "scipy" not in sys.modules
    finder = _HideScipy()
    if hide:
        sys.meta_path.insert(0, finder)
    try:
        from nltk.stem.porter import PorterStemmer
    finally:
        if hide:
            sys.meta_path.remove(finder)
    return PorterStemmer()


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """Porter stem of a lower-cased word (memoised: vocabularies are small)."""
    return str(_stemmer().stem(word))


def words(text: str) -> list[str]:
    """The words of `text` in order, as written."""
    return _WORD.findall(text)


@lru_cache(maxsize=100_000)
def content_terms(text: str) -> tuple[str, ...]:
    """Stemmed, lower-cased words of `text` minus stopwords (memoised per text)."""
    out = []
    for w in words(text):
        low = w.lower().split("'")[0]
        if low and low not in STOPWORDS:
            out.append(stem(low))
    return tuple(out)


def session_date(date_time: str) -> date | None:
    """The calendar date of a LoCoMo session stamp such as `1:56 pm on 8 May, 2023`."""
    match = _DATE_IN_HEADER.search(date_time)
    if not match:
        try:
            return datetime.fromisoformat(date_time.strip()[:10]).date()
        except ValueError:
            return None
    try:
        parsed: datetime = date_parser.parse(match.group(1).replace(",", ""))
        return parsed.date()
    except (ValueError, OverflowError):
        return None


def format_date(day: date) -> str:
    """`8 May 2023` — the date form LoCoMo gold answers use."""
    return f"{day.day} {day.strftime('%B')} {day.year}"
