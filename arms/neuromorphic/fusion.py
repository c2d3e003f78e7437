"""Reciprocal Rank Fusion and the one-record-per-entity rerank (methodology §4 step 9).

    RRF(d) = Σ_lists 1 / (k + rank_list(d)),   rank 1-based, k = 60

Higher is better. Ties keep the order in which items were first seen (hot list first).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from bench.arm.fusion import rrf_fuse


def rrf(lists: Sequence[Sequence[int]], k: int = 60) -> list[tuple[int, float]]:
    """Fuse ranked id lists with `bench.arm.fusion.rrf_fuse`; exact ties in first-seen order."""
    return rrf_fuse(lists, k)


def concatenate(lists: Sequence[Sequence[int]]) -> list[tuple[int, float]]:
    """Fusion switched off: lists in order, duplicates dropped, score 1/position."""
    seen: list[int] = []
    for ranked in lists:
        seen.extend(item for item in ranked if item not in seen)
    return [(item, 1.0 / (i + 1)) for i, item in enumerate(seen)]


def one_per_entity(
    fused: list[tuple[int, float]],
    entity_of: Callable[[int], str],
    is_hot: Callable[[int], bool],
    limit: int,
) -> list[tuple[int, float]]:
    """Keep one record per entity (a hot record beats an archived one) and the top `limit`.

    The kept record takes the best fused score of its entity.
    """
    chosen: dict[str, tuple[int, float]] = {}
    for item, score in fused:
        key = entity_of(item)
        if key not in chosen:
            chosen[key] = (item, score)
        elif is_hot(item) and not is_hot(chosen[key][0]):
            chosen[key] = (item, chosen[key][1])
    return list(chosen.values())[:limit]
