"""Consolidation every `consolidate_every` turns (methodology §4 step 7).

Elevation: a valid ActiveContext record with k ≥ elevate_k becomes CoreAnchor at w = 1.
Dead-link cleanup: links to entities that exist nowhere (neither in the hot set nor in
the archive) are dropped; links to entities the archive still holds are kept.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from arms.neuromorphic.archive_index import ArchiveIndex
from arms.neuromorphic.records import Tier, entity_key
from arms.neuromorphic.workingset import WorkingSet


def elevation_targets(ws: WorkingSet, elevate_k: int) -> list[int]:
    """Ids of valid ActiveContext records reinforced at least `elevate_k` times, in row order.

    One comparison over `k` finds the few candidates; the rest is read for those only.
    """
    rows = np.flatnonzero(ws.k[: ws.n] >= elevate_k)
    keep = ws.alive[rows] & (ws.invalid_at[rows] < 0) & (ws.tier[rows] == Tier.ACTIVE)
    return [ws.ids[r] for r in rows[keep].tolist()]


def dead_links(ws: WorkingSet, index: ArchiveIndex, ids: Iterable[int]) -> dict[str, list[str]]:
    """For records among `ids` with links to unknown entities: id → the links kept."""
    out: dict[str, list[str]] = {}
    for fid in ids:
        row = ws.row_of.get(fid)
        if row is None or not ws.alive[row]:
            continue
        names = ws.related[row]
        kept = [n for n in names if _exists(ws, index, entity_key(n))]
        if len(kept) != len(names):
            out[str(fid)] = kept
    return out


def _exists(ws: WorkingSet, index: ArchiveIndex, key: str) -> bool:
    return bool(ws.by_entity.get(key)) or index.known(key)
