"""Long-term potentiation on retrieval (methodology §4 step 8).

Every hot, valid, non-ephemeral record that survived reranking gets w = 1, k += 1,
last_reinforced_turn = t — applied as one batched event, not one write per record.
Each reinforcement also slows later decay: λ_eff = λ_tier · exp(−η·k).
"""

from __future__ import annotations

from collections.abc import Iterable

from arms.neuromorphic.records import Tier
from arms.neuromorphic.workingset import WorkingSet

_EPHEMERAL = int(Tier.EPHEMERAL)  # an int: enum attribute lookups are slow in a hot loop


def ltp_targets(ws: WorkingSet, ids: Iterable[int]) -> list[int]:
    """The ids among `ids` that LTP reinforces (hot, valid, not EphemeralState), deduplicated."""
    out: list[int] = []
    seen: set[int] = set()
    row_of, alive, invalid_at, tier = ws.row_of, ws.alive, ws.invalid_at, ws.tier
    for fid in ids:
        row = row_of.get(fid)
        if row is None or fid in seen or not alive[row] or invalid_at[row] >= 0:
            continue
        if tier[row] != _EPHEMERAL:
            out.append(fid)
            seen.add(fid)
    return out
