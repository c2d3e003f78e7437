"""Spreading activation over `related_entities` (methodology §4 step 9).

From the hot hits (activation = cosine), activation flows along links in both
directions, `max_hops` deep: a neighbour receives parent · spread_factor · its own
weight. Each hop keeps only the `cap` most activated new records, and the final list
is capped too, so expansion is score-ranked and bounded. Cold hits expand one hop.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from arms.neuromorphic.records import FactRow, entity_key
from arms.neuromorphic.workingset import WorkingSet


def neighbours(ws: WorkingSet, row: int) -> Iterator[int]:
    """Rows linked to `row`: entities it names, and records that name its entity."""
    for name in ws.related[row]:
        yield from ws.by_entity.get(entity_key(name), ())
    yield from ws.linked_from.get(ws.keys[row], ())


def _fact_neighbours(ws: WorkingSet, fact: FactRow) -> Iterator[int]:
    for name in fact.related:
        yield from ws.by_entity.get(entity_key(name), ())
    yield from ws.linked_from.get(entity_key(fact.entity_name), ())


def spread(
    ws: WorkingSet,
    weights: np.ndarray,
    seeds: list[tuple[int, float]],
    cold_seeds: list[tuple[FactRow, float]],
    *,
    max_hops: int,
    cap: int,
    factor: float,
) -> list[tuple[int, float]]:
    """Activated hot rows (not seeds) as (row, activation), best first, at most `cap`."""
    gain = (np.where(ws.valid_mask(), weights[: ws.n], 0.0) * factor).tolist()
    for row, _ in seeds:
        gain[row] = 0.0  # seeds are already in the hot list
    best: dict[int, float] = {}
    frontier = seeds
    for _ in range(max_hops):
        found: dict[int, float] = {}
        for row, score in frontier:
            _offer(found, best, gain, neighbours(ws, row), score)
        frontier = _top(ws, found, cap)
        best.update(frontier)
        if not frontier:
            break
    found = {}
    for fact, score in cold_seeds:
        _offer(found, best, gain, _fact_neighbours(ws, fact), score)
    best.update(_top(ws, found, cap))
    return _top(ws, best, cap)


def _offer(
    found: dict[int, float],
    best: dict[int, float],
    gain: list[float],
    rows: Iterator[int],
    parent: float,
) -> None:
    """Pass `parent` activation to each row (× factor × weight), keeping the maximum."""
    found_get, best_get = found.get, best.get
    for row in rows:
        act = parent * gain[row]
        if act > 0.0 and act > found_get(row, 0.0) and act > best_get(row, 0.0):
            found[row] = act


def _top(ws: WorkingSet, scores: dict[int, float], cap: int) -> list[tuple[int, float]]:
    ranked = sorted(scores.items(), key=lambda item: (-item[1], ws.ids[item[0]]))
    return [(row, act) for row, act in ranked[:cap] if act > 0.0]
