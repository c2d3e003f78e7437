"""Spreading activation over `related_entities` (methodology §4 step 9).

From the hot hits (activation = cosine), activation flows along links in both
directions, `max_hops` deep: a neighbour receives parent · spread_factor · its own
weight. Each hop keeps only the `cap` most activated new records, and the final list
is capped too, so expansion is score-ranked and bounded. Cold hits expand one hop.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from math import inf

import numpy as np

from arms.neuromorphic.records import FactRow, entity_key
from arms.neuromorphic.workingset import WorkingSet


@lru_cache(maxsize=65_536)
def _link_keys(related: tuple[str, ...], own: str) -> tuple[tuple[bool, str], ...]:
    """The row sets a source reaches: (True, key) per entity it names, (False, its own key)."""
    return (*((True, entity_key(name)) for name in related), (False, own))


def _grouped(
    links: Iterable[tuple[tuple[str, ...], str, float]],
) -> dict[tuple[bool, str], float]:
    """The best parent activation per linked row set, from (related names, own key, parent).

    A source reaches the rows of every entity it names (`by_entity`) and the rows that
    name its own entity (`linked_from`). Since p·g is monotone in p for g ≥ 0 (float
    rounding included), max over parents of p·g = (max p)·g, so visiting each set once
    with its best parent gives exactly the activations of visiting it per parent.
    """
    out: dict[tuple[bool, str], float] = {}
    get = out.get
    for related, own, parent in links:
        for key in _link_keys(related, own):
            prev = get(key)
            if prev is None or parent > prev:
                out[key] = parent
    return out


def _offer_grouped(
    ws: WorkingSet,
    found: dict[int, float],
    best: dict[int, float],
    gain: np.ndarray,
    groups: dict[tuple[bool, str], float],
) -> None:
    """Pass each linked row set its best parent's activation (× factor × weight).

    A row keeps the largest activation it is offered, if that beats what an earlier
    hop gave it (`best`). Activations are positive: a non-positive one never beats the
    default 0.0 of `found`, so it needs no test of its own. `gain` is read per offered
    row (`.item`: a Python float, the value `tolist` gives) rather than converted whole:
    a few hundred offers against a hot set of thousands of rows.
    """
    found_get, best_get, gain_of = found.get, best.get, gain.item
    by_entity, linked_from = ws.by_entity, ws.linked_from
    for (named, key), parent in groups.items():
        rows = (by_entity if named else linked_from).get(key)
        if not rows or parent <= 0.0:  # a non-positive parent activates nothing
            continue
        for row in rows:
            act = parent * gain_of(row)
            if act > found_get(row, 0.0) and act > best_get(row, 0.0):
                found[row] = act


def spread(
    ws: WorkingSet,
    weights: np.ndarray,
    seeds: list[tuple[int, float]],
    cold_seeds: list[tuple[FactRow, float]],
    *,
    max_hops: int,
    cap: int,
    factor: float,
    valid: np.ndarray | None = None,
) -> list[tuple[int, float]]:
    """Activated hot rows (not seeds) as (row, activation), best first, at most `cap`.

    `valid`: `ws.valid_mask()` when the caller has it already (invalid rows gain 0).
    """
    mask = ws.valid_mask() if valid is None else valid
    gain = np.where(mask, weights[: ws.n], 0.0) * factor
    gain[[row for row, _ in seeds]] = 0.0  # seeds are already in the hot list
    most = gain.max(initial=0.0).item()
    best: dict[int, float] = {}
    frontier = seeds
    for hop in range(max_hops):
        found: dict[int, float] = {}
        least = _least(best, cap) if hop == max_hops - 1 else -inf
        links = (
            (ws.related[row], ws.keys[row], score)
            for row, score in frontier
            if not score * most < least
        )
        _offer_grouped(ws, found, best, gain, _grouped(links))
        frontier = _top(ws, found, cap)
        best.update(frontier)
        if not frontier:
            break
    found = {}
    least = _least(best, cap)
    cold = (
        (f.related, entity_key(f.entity_name), score)
        for f, score in cold_seeds
        if not score * most < least
    )
    _offer_grouped(ws, found, best, gain, _grouped(cold))
    best.update(_top(ws, found, cap))
    return _top(ws, best, cap)


def _least(best: dict[int, float], cap: int) -> float:
    """The activation a row must reach to still rank: the `cap`-th best so far, else −inf.

    In `_top`, only rows at or above it can be among the `cap` best. In `spread`, from
    the last hop on, `best` only gains rows and raises values, so once it holds
    `cap` rows at ≥ this value, a row offered less can never be among the final `cap`
    (nor change which rows are). A source of activation p > 0 offers at most p·max(gain)
    (rounding is monotone; p ≤ 0 offers nothing), so a source with p·max(gain) below
    it is skipped with all it links to, and the result is the same bit for bit. The
    test reads `not p·max(gain) < least`, so a NaN source is kept, as it always was.
    """
    return sorted(best.values(), reverse=True)[cap - 1] if 0 < cap <= len(best) else -inf


def _top(ws: WorkingSet, scores: dict[int, float], cap: int) -> list[tuple[int, float]]:
    """The `cap` best (row, activation), ties by record id.

    Only rows at or above the `cap`-th largest activation can rank (one C sort of the
    floats finds it; rows tied with it all stay), so the (−activation, id, row) tuples
    are built for those few, not for the tens of rows a hop finds. The tuples are
    compared in C; ids are unique, so the row never decides and the order is that of
    the key (−activation, id).
    """
    ids = ws.ids
    least = _least(scores, cap)
    items = [(-act, ids[row], row) for row, act in scores.items() if act >= least]
    return [(row, -neg) for neg, _, row in sorted(items)[:cap] if neg < 0.0]
