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
    """Record ids to (delete, archive) given the current weights of all rows."""
    n = ws.n
    low = ws.alive[:n] & (weights[:n] < w_prune)
    valid = ws.invalid_at[:n] < 0
    tier = ws.tier[:n]
    delete = low & (~valid | (tier == Tier.EPHEMERAL))
    archive = low & valid & (tier == Tier.ACTIVE)
    return [ws.ids[r] for r in np.flatnonzero(delete)], [ws.ids[r] for r in np.flatnonzero(archive)]
