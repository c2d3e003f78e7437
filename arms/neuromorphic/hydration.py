"""Graded hydration: put the source turns of the top facts back beside them.

The best `full_k` facts get their whole source turns; the rest of the top `top_k` get
the one sentence of each source turn that best matches the query and the fact (shared
content terms, query terms counting double; the first on ties). A turn is shown at
most once.
"""

from __future__ import annotations

import re
from functools import lru_cache

from arms.neuromorphic.archive import query_terms
from arms.neuromorphic.archive_index import ArchiveIndex
from arms.neuromorphic.records import Recalled

_SENTENCE = re.compile(r"(?<=[.!?])\s+")


@lru_cache(maxsize=16_384)
def _terms(text: str) -> frozenset[str]:
    """The content terms of a text, cached: the same turns are hydrated for many questions."""
    return frozenset(query_terms(text))


def best_sentence(turn_text: str, query: str, fact: str = "") -> str:
    """`Speaker: <the sentence sharing most content terms with the query and the fact>`."""
    speaker, sep, body = turn_text.partition(": ")
    if not sep:
        speaker, body = "", turn_text
    asked, stated = _terms(query), _terms(fact)

    def overlap(sentence: str) -> int:
        terms = _terms(sentence)
        return 2 * len(asked & terms) + len(stated & terms)

    sentences = [s for s in _SENTENCE.split(body) if s.strip()] or [body]
    best = max(sentences, key=overlap)
    return f"{speaker}: {best}" if speaker else best


def hydrate(
    recalled: list[Recalled], index: ArchiveIndex, query: str, top_k: int, full_k: int
) -> dict[int, list[str]]:
    """Fact id → source lines `(date) Speaker: text` for the top facts."""
    shown: set[str] = set()
    out: dict[int, list[str]] = {}
    for rank, item in enumerate(recalled[:top_k]):
        lines = []
        for dia_id in item.fact.source_ids:
            source = index.turns.get(dia_id)
            if source is None or dia_id in shown:
                continue
            shown.add(dia_id)
            if rank < full_k:
                text = source.text
            else:
                text = best_sentence(source.text, query, item.fact.fact_content)
            lines.append(f"({source.date}) {text}")
        if lines:
            out[item.fact.id] = lines
    return out
