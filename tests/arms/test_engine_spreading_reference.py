"""Spreading activation equals, bit for bit, the per-offer loop it replaced.

The reference offers every source's activation; `spread` skips, from the last hop on,
the sources whose best possible offer could no longer rank (`_least`). Gains above 1
(factor 2, weights up to 2.5) check that the bound holds without assuming weights ≤ 1.
"""

from __future__ import annotations

import heapq

import numpy as np

from arms.neuromorphic.records import FactRow, Tier, entity_key
from arms.neuromorphic.spreading import spread
from arms.neuromorphic.workingset import WorkingSet


def _reference(
    ws: WorkingSet,
    weights: np.ndarray,
    seeds: list[tuple[int, float]],
    cold_seeds: list[tuple[FactRow, float]],
    max_hops: int,
    cap: int,
    factor: float,
) -> list[tuple[int, float]]:
    """The former implementation: every offer in a Python loop, per parent."""
    gain = (np.where(ws.valid_mask(), weights[: ws.n], 0.0) * factor).tolist()
    for row, _ in seeds:
        gain[row] = 0.0

    def offer(found: dict[int, float], best: dict[int, float], links: list) -> None:
        for related, own, parent in links:
            sets = [ws.by_entity.get(entity_key(n)) for n in related]
            for rows in [*sets, ws.linked_from.get(own)]:
                for row in rows or ():
                    act = parent * gain[row]
                    if act > found.get(row, 0.0) and act > best.get(row, 0.0):
                        found[row] = act

    def top(scores: dict[int, float]) -> list[tuple[int, float]]:
        ranked = heapq.nsmallest(cap, [(-a, ws.ids[r], r) for r, a in scores.items()])
        return [(r, -neg) for neg, _, r in ranked if neg < 0.0]

    best: dict[int, float] = {}
    frontier = seeds
    for _ in range(max_hops):
        found: dict[int, float] = {}
        offer(found, best, [(ws.related[r], ws.keys[r], s) for r, s in frontier])
        frontier = top(found)
        best.update(frontier)
        if not frontier:
            break
    found = {}
    offer(found, best, [(f.related, entity_key(f.entity_name), s) for f, s in cold_seeds])
    best.update(top(found))
    return top(best)


def _random_ws(rng: np.random.Generator, n: int, names: int) -> WorkingSet:
    ws = WorkingSet(dim=4)
    for i in range(n):
        related = tuple(f"E{j}" for j in rng.integers(names, size=rng.integers(4)))
        vec = np.ones(4, dtype=np.float32) / 2
        ws.add(
            FactRow(i + 1, 1, f"e{rng.integers(names)}", "x", Tier.ACTIVE, related, "d", (), vec), 1
        )
    ws.invalidate(rng.choice(n, size=n // 5, replace=False).tolist(), 2, "superseded", None)
    ws.remove(rng.choice(n, size=n // 10, replace=False).tolist())
    return ws


def test_spread_matches_the_per_offer_loop_bitwise() -> None:
    rng = np.random.default_rng(7)
    for trial in range(60):
        n = int(rng.integers(5, 300))
        ws = _random_ws(rng, n, names=int(rng.integers(3, 40)))
        # quantised weights and scores make exact ties common
        weights = rng.integers(0, 5, size=n) / 4 if trial % 2 else rng.random(n)
        seeds = [
            (int(r), float(rng.integers(-1, 5)) / 4)
            for r in rng.choice(n, size=min(n, 10), replace=False)
        ]
        cold = [
            (
                FactRow(
                    10_000 + j,
                    1,
                    f"E{rng.integers(40)}",
                    "y",
                    Tier.ACTIVE,
                    (f"e{rng.integers(40)}",),
                    "d",
                    (),
                    np.zeros(4),
                ),
                float(rng.random()),
            )
            for j in range(int(rng.integers(0, 20)))
        ]
        if trial % 3 == 2:
            weights = weights * 2.5
        cases = ((2, 10, 0.5), (1, 3, 0.5), (3, 50, 0.5), (2, 3, 0.5), (2, 3, 2.0))
        for hops, cap, factor in cases:
            want = _reference(ws, weights, seeds, cold, hops, cap, factor)
            got = spread(ws, weights, seeds, cold, max_hops=hops, cap=cap, factor=factor)
            assert [(r, a.hex()) for r, a in got] == [(r, a.hex()) for r, a in want]
            assert all(type(a) is float and type(r) is int for r, a in got)
