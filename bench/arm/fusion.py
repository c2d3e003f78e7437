"""Reciprocal Rank Fusion: the one implementation every arm uses.

    RRF(d) = Σ_lists 1 / (k + rank_list(d)),   rank 1-based within each list, k = 60

Higher is better (Cormack et al., 2009). Exact ties are common (rank a in one list and
b in the other scores the same as b and a), so they are broken by a stable key, never
by dict or hash order: by default the order in which items are first seen (the first
list wins, then its rank), or by `tie_key` (e.g. the document id).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from operator import itemgetter
from typing import Any, TypeVar

T = TypeVar("T", bound=Hashable)


def rrf_fuse(
    rankings: Sequence[Sequence[T]], k: int = 60, tie_key: Callable[[T], Any] | None = None
) -> list[tuple[T, float]]:
    """Fuse ranked id lists; return (id, RRF score) best first, exact ties by a stable key.

    Args:
        rankings: each list best first; an id may appear in any number of lists.
        k: the RRF constant (60 in the paper; larger flattens the rank weights).
        tie_key: key for exact ties; None = first-seen order across `rankings`.
    """
    scores: dict[T, float] = {}
    for ranked in rankings:
        for rank, item in enumerate(ranked, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    if tie_key is None:  # `scores` holds items in first-seen order and sorting is stable
        return sorted(scores.items(), key=itemgetter(1), reverse=True)
    return sorted(scores.items(), key=lambda kv: (-kv[1], tie_key(kv[0])))
