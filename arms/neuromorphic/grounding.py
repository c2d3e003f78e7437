"""Suspect facts of one extraction: repeated within the exchange, or not grounded in it.

A small extractor can return the same invented fact four times for one exchange, which
stores facts and so looks healthy by the failed/facts counts alone. Two checks, counted
per exchange into the extraction health (`bench.scoring.health`):

- *duplicate*: a fact whose normalised content (`content_terms` of `entity_name` and
  `fact_content`, as a set) equals an earlier fact's of the same exchange;
- *ungrounded*: a fact with at least one content term (stemmed word outside the stop
  list; numbers, month and weekday names left out: they are resolved against the
  session date, not copied) of which fewer than `MIN_GROUNDED_SHARE` occur in the
  exchange — its turns with their speakers, and the session date.

Only a model's facts are checked (the engine skips the rule-based extractor, whose facts
are the turns' own words by construction).
"""

from __future__ import annotations

import calendar
from collections.abc import Sequence

from arms.neuromorphic.exchange import Exchange
from arms.neuromorphic.extraction import Extraction
from arms.neuromorphic.records import FactDraft
from bench.text import content_terms

MIN_GROUNDED_SHARE = 0.5
"""A fact is grounded when at least this share of its content terms occur in the exchange."""
_DATE_TERMS = frozenset(content_terms(" ".join([*calendar.month_name[1:], *calendar.day_name])))


def _checked_terms(text: str) -> set[str]:
    """Content terms that grounding checks: no numbers, no month or weekday names."""
    return {t for t in content_terms(text) if not t.isdigit() and t not in _DATE_TERMS}


def duplicates(facts: Sequence[FactDraft]) -> int:
    """Facts whose normalised entity and content repeat an earlier fact of the same list."""
    seen: set[frozenset[str]] = set()
    repeated = 0
    for fact in facts:
        key = frozenset(content_terms(f"{fact.entity_name} {fact.fact_content}"))
        repeated += key in seen
        seen.add(key)
    return repeated


def ungrounded(facts: Sequence[FactDraft], exchange: Exchange) -> int:
    """Facts whose content terms mostly do not occur in the exchange (see module doc)."""
    source = set(content_terms(exchange.text()))  # the header holds the session date
    count = 0
    for fact in facts:
        terms = _checked_terms(fact.fact_content)
        if terms and len(terms & source) / len(terms) < MIN_GROUNDED_SHARE:
            count += 1
    return count


def extraction_counts(extraction: Extraction, exchange: Exchange) -> dict[str, int]:
    """What one extraction adds to the engine's mode and quality counters.

    A model's extraction (`tools` or `json_schema` mode) counts one `via_<mode>`, its
    ignored tool requests and its duplicate and ungrounded facts; a rule-based one
    counts nothing here.
    """
    if extraction.mode not in ("tools", "json_schema"):
        return {}
    return {
        f"via_{extraction.mode}": 1,
        "tools_ignored": int(extraction.tools_ignored),
        "facts_duplicate": duplicates(extraction.facts),
        "facts_ungrounded": ungrounded(extraction.facts, exchange),
    }
