"""Engine state as a fold over the event log: one `apply` for live use and for replay.

The engine never mutates its working set or archive index directly: it appends an
event and applies it here. Replaying the live events of the archive therefore
rebuilds exactly the state an uninterrupted run has (rollback, crash recovery).

Event kinds and payloads:
  exchange  {date_time, turns: [[dia_id, text], ...]}   the exchange log
  insert    {ids}        new facts (rows of the archive's `facts` table)
  supersede {ids}        overridden facts: invalid, out of hot and cold search
  archive   {ids}        pruned ActiveContext records: invalid in the hot set
  delete    {ids}        records removed from the hot set (still archived)
  reinforce {ids}        LTP: w = 1, k += 1, last_reinforced_turn = turn
  elevate   {ids}        ActiveContext → CoreAnchor at w = 1
  relink    {links: {id: [entity names]}}  dead links dropped
  rollback  {to_turn}    events after `to_turn` logged before this one are void
  rollback  {to_seq}     events logged after event `to_seq` (and before this) are void
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from arms.neuromorphic.archive_index import ArchiveIndex, FactSource
from arms.neuromorphic.records import Event, FactRow
from arms.neuromorphic.workingset import WorkingSet

INDEX_KINDS = ("exchange", "insert", "supersede", "rollback")
"""The event kinds a replay with `hot=False` reads (the archive index, and rollbacks that
void events); every other kind only changes the hot set, so a store whose hot set
comes from LanceDB need not read them (most of a long log is `reinforce`)."""


class MemoryState:
    """The working set (hot) and the archive index of one scope."""

    def __init__(self, dim: int, source: FactSource | None = None) -> None:
        """`source`: where the archive index reads facts back (and keeps its vector file)."""
        self.index = ArchiveIndex(dim, source)
        self.ws = WorkingSet(dim, source=self.index)

    def adopt(self, ws: WorkingSet) -> None:
        """Use a working set loaded from elsewhere (LanceDB), linking its rows to the index.

        Its rows then read their vectors from the index's vector file, which holds the
        same float32 bytes (both are the archived fact's embedding).
        """
        pos = self.index.pos
        ws.attach(self.index, [pos.get(fid, -1) for fid in ws.ids])
        self.ws = ws

    def apply(self, event: Event, facts: Mapping[int, FactRow], *, hot: bool = True) -> None:
        """Apply one event; with `hot=False` only the archive index is updated."""
        self.update(event.turn, event.kind, event.payload, facts, hot=hot)

    def update(
        self,
        t: int,
        kind: str,
        payload: dict[str, Any],
        facts: Mapping[int, FactRow],
        *,
        hot: bool = True,
    ) -> None:
        """`apply` of an event given by its fields (the engine's live events need no `Event`)."""
        if kind == "exchange":
            self.index.add_exchange(t, payload["date_time"], payload["turns"])
        elif kind == "insert":
            for fid in payload["ids"]:
                self.index.add_fact(facts[fid])
                if hot:
                    self.ws.place(self.ws.add(facts[fid], t), self.index.pos[fid])
        elif kind == "supersede":
            self.index.supersede(payload["ids"], t)
            if hot:
                self._invalidate(payload["ids"], t, "superseded")
        elif hot:
            self._apply_hot(kind, t, payload)

    def _apply_hot(self, kind: str, t: int, payload: dict[str, Any]) -> None:
        ws = self.ws
        if kind == "archive":
            self._invalidate(payload["ids"], t, "pruned")
        elif kind == "delete":
            ws.remove(self._rows(payload["ids"]))
        elif kind == "reinforce":
            ws.reinforce(self._rows(payload["ids"]), t)
        elif kind == "elevate":
            ws.elevate(self._rows(payload["ids"]), t)
        elif kind == "relink":
            for fid, names in payload["links"].items():
                rows = self._rows([int(fid)])
                if rows:
                    ws.relink(rows[0], tuple(names))
        else:
            raise ValueError(f"unknown memory event kind {kind!r}")

    def _rows(self, ids: list[int]) -> list[int]:
        """Alive hot rows of these record ids (ids not in the hot set are skipped)."""
        ws = self.ws
        return [r for i in ids if (r := ws.row_of.get(i)) is not None and ws.alive[r]]

    def _invalidate(self, ids: list[int], t: int, reason: str) -> None:
        rows = [r for r in self._rows(ids) if self.ws.invalid_at[r] < 0]
        self.ws.invalidate(rows, t, reason, self.index.turn_date.get(t))
