"""The hot working set of one scope: weights in numpy, text in lists, vectors by reference.

Rows never move except in `compact` (which keeps their order), so row indices held in
the entity and link maps stay valid between compactions. Rows are kept in record-id
order; a working set rebuilt from the archive or loaded from LanceDB is row-for-row
identical to the live one, so search ties break the same way after a resume.

Vectors: every hot record is archived, and the archive index keeps each fact's vector in
its vector file. Once a row's archive position is known (`place`, `attach`), its vector
is read from there (`vectors`) instead of being held a second time: a 10M-token
conversation leaves ~60,000 hot rows (superseded records stay hot, docs/engine.md),
64 MiB of float32 vectors at dim 256, which grew with the conversation (issue 39). A row
whose position is not known, or a working set without a source, holds its own copy.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from arms.neuromorphic.records import Fact, FactRow, Tier, entity_key

NUMERIC = ("w", "k", "tier", "created", "reinforced", "valid_at", "invalid_at")
TEXT = ("ids", "entity", "content", "related", "sources", "valid_date", "invalid_date", "reason")
_TIERS = tuple(Tier)  # Tier by value, without the enum call in a hot path
_DTYPES = {
    "w": np.float64,
    "k": np.int64,
    "tier": np.int64,
    "created": np.int64,
    "reinforced": np.int64,
    "valid_at": np.int64,
    "invalid_at": np.int64,
}


class VectorSource(Protocol):
    """Where the vectors of archived facts are read by archive position."""

    def vectors_at(self, positions: Sequence[int] | np.ndarray) -> np.ndarray:
        """The vectors at `positions`, in order, as one (len, dim) float32 array."""
        ...


class WorkingSet:
    """Hot records (valid and recently invalidated) of one agent/conversation scope."""

    def __init__(self, dim: int, capacity: int = 64, source: VectorSource | None = None) -> None:
        """`source`: where placed rows' vectors are read (None: every row holds its own)."""
        self.dim = dim
        self.n = 0
        self.source = source
        self.held: dict[int, np.ndarray] = {}
        """Row → its own vector, for rows not readable from `source` (module docstring)."""
        self.alive = np.zeros(capacity, dtype=bool)
        self.w, self.k, self.tier = (np.zeros(capacity, _DTYPES[c]) for c in ("w", "k", "tier"))
        self.created = np.zeros(capacity, dtype=np.int64)
        self.reinforced = np.zeros(capacity, dtype=np.int64)
        self.valid_at = np.zeros(capacity, dtype=np.int64)
        self.invalid_at = np.full(capacity, -1, dtype=np.int64)
        self.archive_pos = np.full(capacity, -1, dtype=np.int64)
        """Each row's position in the archive index (-1: not known); set by `MemoryState`."""
        self.ids: list[int] = []
        self.entity: list[str] = []
        self.content: list[str] = []
        self.related: list[tuple[str, ...]] = []
        self.sources: list[tuple[str, ...]] = []
        self.valid_date: list[str] = []
        self.invalid_date: list[str | None] = []
        self.reason: list[str | None] = []
        self.keys: list[str] = []
        self.row_of: dict[int, int] = {}
        self.by_entity: dict[str, set[int]] = defaultdict(set)
        self.linked_from: dict[str, set[int]] = defaultdict(set)
        self.dirty: set[int] = set()
        """Record ids changed since the last flush (removed ones included)."""

    # ---- growth and insertion -------------------------------------------------------
    def _grow(self) -> None:
        cap = max(64, 2 * len(self.alive))
        self.alive = np.concatenate([self.alive, np.zeros(cap - len(self.alive), dtype=bool)])
        extra_pos = np.full(cap - len(self.archive_pos), -1, dtype=np.int64)
        self.archive_pos = np.concatenate([self.archive_pos, extra_pos])
        for name in NUMERIC:
            old = getattr(self, name)
            fill = -1 if name == "invalid_at" else 0
            extra = np.full(cap - len(old), fill, dtype=old.dtype)
            setattr(self, name, np.concatenate([old, extra]))

    def add(self, fact: FactRow, t: int) -> int:
        """Insert a new record at weight 1, k 0, valid from turn `t`; return its row."""
        return self._append(fact, 1.0, 0, int(fact.tier), t, t, t, -1, None, None)

    def add_state(self, fact: FactRow, nums: dict[str, Any], validity: dict[str, Any]) -> int:
        """Append a record with explicit state (used when loading a persisted store)."""
        return self._append(
            fact,
            nums["w"],
            nums["k"],
            nums["tier"],
            nums["created"],
            nums["reinforced"],
            validity["valid_at"],
            validity["invalid_at"],
            validity["invalid_date"],
            validity["reason"],
        )

    def _append(
        self,
        fact: FactRow,
        w: float,
        k: int,
        tier: int,
        created: int,
        reinforced: int,
        valid_at: int,
        invalid_at: int,
        invalid_date: str | None,
        reason: str | None,
    ) -> int:
        """Append one record's state as values, not dicts (inserting is per fact)."""
        if self.n == len(self.alive):
            self._grow()
        row = self.n
        self.n += 1
        self.held[row] = np.array(fact.embedding, dtype=np.float32)  # a copy, as a row was
        self.alive[row] = True
        self.archive_pos[row] = -1
        self.w[row] = w
        self.k[row] = k
        self.tier[row] = tier
        self.created[row] = created
        self.reinforced[row] = reinforced
        self.valid_at[row] = valid_at
        self.invalid_at[row] = invalid_at
        self.ids.append(fact.id)
        self.entity.append(fact.entity_name)
        self.keys.append(entity_key(fact.entity_name))
        self.content.append(fact.fact_content)
        self.related.append(fact.related)
        self.sources.append(fact.source_ids)
        self.valid_date.append(fact.valid_date)
        self.invalid_date.append(invalid_date)
        self.reason.append(reason)
        self.row_of[fact.id] = row
        self._index(row)
        self.dirty.add(fact.id)
        return row

    def _index(self, row: int) -> None:
        self.by_entity[self.keys[row]].add(row)
        for name in self.related[row]:
            self.linked_from[entity_key(name)].add(row)

    def _unindex(self, row: int) -> None:
        self.by_entity[self.keys[row]].discard(row)
        for name in self.related[row]:
            self.linked_from[entity_key(name)].discard(row)

    # ---- state transitions ------------------------------------------------------------
    def invalidate(self, rows: list[int], t: int, reason: str, date: str | None) -> None:
        """Mark rows invalid at turn `t` (history kept, weight frozen, out of search)."""
        for row in rows:
            self.invalid_at[row] = t
            self.invalid_date[row] = date
            self.reason[row] = reason
            self.dirty.add(self.ids[row])

    def remove(self, rows: list[int]) -> None:
        """Delete rows from the hot set (they stay in the cold archive)."""
        for row in rows:
            if self.alive[row]:
                self.alive[row] = False
                self._unindex(row)
                self.dirty.add(self.ids[row])

    def reinforce(self, rows: list[int], t: int) -> None:
        """LTP: w = 1, k += 1, last_reinforced_turn = t, for all rows at once."""
        idx = np.asarray(rows, dtype=np.int64)
        self.w[idx] = 1.0
        self.k[idx] += 1
        self.reinforced[idx] = t
        self.dirty.update(self.ids[r] for r in rows)

    def elevate(self, rows: list[int], t: int) -> None:
        """Promote rows to CoreAnchor at w = 1."""
        idx = np.asarray(rows, dtype=np.int64)
        self.tier[idx] = int(Tier.CORE)
        self.w[idx] = 1.0
        self.reinforced[idx] = t
        self.dirty.update(self.ids[r] for r in rows)

    def relink(self, row: int, names: tuple[str, ...]) -> None:
        """Replace a row's related entities."""
        self._unindex(row)
        self.related[row] = names
        self._index(row)
        self.dirty.add(self.ids[row])

    def place(self, row: int, position: int) -> None:
        """Row `row` is the archived fact at `position`: read its vector from the source."""
        self.archive_pos[row] = position
        if self.source is not None and position >= 0:
            self.held.pop(row, None)

    def attach(self, source: VectorSource, positions: Sequence[int]) -> None:
        """Read vectors from `source`, where row i is at `positions[i]` (-1: not archived)."""
        self.source = source
        for row, position in enumerate(positions):
            self.place(row, position)

    # ---- queries ----------------------------------------------------------------------
    def vectors(self, rows: Sequence[int] | np.ndarray) -> np.ndarray:
        """The vectors of `rows`, in order, as one (len, dim) float32 array (a copy).

        A row reads from the source when it has one and the row's position is known
        (`place` keeps a vector exactly then), so the choice is one array test per call,
        not a look-up per row: a block of 1,024 rows costs one read of the vector file.
        """
        idx = np.asarray(rows, dtype=np.int64).reshape(-1)
        out = np.empty((len(idx), self.dim), dtype=np.float32)
        pos = self.archive_pos[idx]
        placed = pos >= 0 if self.source is not None else np.zeros(len(idx), dtype=bool)
        if self.source is not None and placed.any():
            out[placed] = self.source.vectors_at(pos[placed])
        for i in np.flatnonzero(~placed).tolist():
            vector = self.held.get(int(idx[i]))
            if vector is None:  # cannot happen through `add`, `place` and `attach`
                raise ValueError(f"working set: no vector for row {int(idx[i])}")
            out[i] = vector
        return out

    def matrix(self) -> HotVectors:
        """The rows' vectors as a sliceable matrix (what `vectors.cosine_scores` reads)."""
        return HotVectors(self)

    def valid_mask(self) -> np.ndarray:
        """Rows that are alive and valid (searchable)."""
        return self.alive[: self.n] & (self.invalid_at[: self.n] < 0)

    def valid_rows_of(self, key: str) -> list[int]:
        """Valid rows whose entity key is `key`, in row order."""
        return sorted(r for r in self.by_entity.get(key, ()) if self.invalid_at[r] < 0)

    def fact(self, row: int, weight: float) -> Fact:
        """The public view of one row (`.item` reads a Python scalar without a numpy one)."""
        invalid = self.invalid_at.item(row)
        return Fact(
            id=self.ids[row],
            entity_name=self.entity[row],
            fact_content=self.content[row],
            memory_type=_TIERS[self.tier.item(row)],
            weight=float(weight),
            k=self.k.item(row),
            created_at_turn=self.created.item(row),
            last_reinforced_turn=self.reinforced.item(row),
            related_entities=self.related[row],
            valid_at=self.valid_at.item(row),
            invalid_at=None if invalid < 0 else invalid,
            valid_date=self.valid_date[row],
            invalid_date=self.invalid_date[row],
            source_ids=self.sources[row],
            invalid_reason=self.reason[row],
            in_hot=True,
        )

    # ---- maintenance ------------------------------------------------------------------
    def compact(self, min_dead_fraction: float = 0.5) -> bool:
        """Drop removed rows (keeping order) once they are a large share; True if done."""
        dead = self.n - int(self.alive[: self.n].sum())
        if self.n < 64 or dead < min_dead_fraction * self.n:
            return False
        keep = np.flatnonzero(self.alive[: self.n])
        new_row = {int(old): new for new, old in enumerate(keep)}
        self.held = {new_row[r]: v for r, v in self.held.items() if r in new_row}
        for name in NUMERIC:
            arr = getattr(self, name)
            arr[: len(keep)] = arr[keep]
        self.archive_pos[: len(keep)] = self.archive_pos[keep]
        self.alive[: len(keep)] = True
        self.alive[len(keep) :] = False
        for name in TEXT:
            values = getattr(self, name)
            setattr(self, name, [values[i] for i in keep])
        self.keys = [self.keys[i] for i in keep]
        self.n = len(keep)
        self._reindex()
        return True

    def _reindex(self) -> None:
        self.row_of = {rid: row for row, rid in enumerate(self.ids)}
        self.by_entity = defaultdict(set)
        self.linked_from = defaultdict(set)
        for row in range(self.n):
            if self.alive[row]:
                self._index(row)

    def snapshot(self) -> dict[str, Any]:
        """Alive rows' full state, keyed by record id (for comparisons and tests)."""
        out: dict[str, Any] = {}
        rows = [int(r) for r in np.flatnonzero(self.alive[: self.n])]
        for row, vector in zip(rows, self.vectors(rows), strict=True):
            out[str(self.ids[row])] = {
                **{name: getattr(self, name)[row].item() for name in NUMERIC},
                **{name: getattr(self, name)[row] for name in TEXT if name != "ids"},
                "emb": vector.tobytes().hex(),
            }
        return out


class HotVectors:
    """A working set's vectors, read a slice of rows at a time (`vectors.Rows`)."""

    def __init__(self, ws: WorkingSet) -> None:
        self._ws = ws

    def __getitem__(self, rows: slice, /) -> np.ndarray:
        return self._ws.vectors(range(*rows.indices(self._ws.n)))
