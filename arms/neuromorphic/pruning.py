"""Pruning at w_prune (methodology §4 step 6).

A record whose weight fell below `w_prune`: EphemeralState is deleted; ActiveContext
is marked invalid (archived: it stays in the cold archive and its history); a record
that was already invalid is deleted from the hot set. CoreAnchor never decays, so it
is never pruned. With λ = 0.05 a never-reinforced ActiveContext record survives
ln(1/0.1)/0.05 = 46.05 turns (pruned on turn 47); with λ = 0.005, 460.5 (turn 461).
"""

from __future__ import annotations

import numpy as np

from arms.neuromorphic.records import Tier
from arms.neuromorphic.workingset import WorkingSet


def prune_plan(ws: WorkingSet, weights: np.ndarray, w_prune: float) -> tuple[list[int], list[int]]:
    """Record ids to (delete, archive), in row order, given the weights of the first rows.

    Rows past `len(weights)` were inserted at this turn and weigh w·exp(−λ·0) = 1. One
    comparison over the weights finds the few rows below `w_prune`; alive, validity and
    tier are then read for those rows only, not for the whole hot set.
    """
    rows = np.flatnonzero(weights[: ws.n] < w_prune)
    if w_prune > 1.0:
        rows = np.concatenate([rows, np.arange(len(weights), ws.n)])
    rows = rows[ws.alive[rows]]
    valid = ws.invalid_at[rows] < 0
    tier = ws.tier[rows]
    delete = rows[~valid | (tier == Tier.EPHEMERAL)]
    archive = rows[valid & (tier == Tier.ACTIVE)]
    return [ws.ids[r] for r in delete.tolist()], [ws.ids[r] for r in archive.tolist()]
