"""The hot store: the working set persisted in LanceDB (cosine), written append-only.

The engine searches its in-memory working set (numpy, exact cosine — the same ranking
LanceDB's flat cosine search gives) and writes here only at flush time, in ONE append:
a row for every record changed since the last flush, stamped with the flush's `seq`,
and a tombstone row for every record removed from the hot set. Nothing is deleted or
rewritten per flush (a LanceDB delete cost as much as the append). Reading a scope
keeps, per id, the row with the highest `seq` and drops tombstones. Superseded rows and
tombstones are compacted away — the scope rewritten from the working set — once they
outnumber the live rows (at least `MIN_STALE`), so the table stays O(hot set) and the
rewrite costs O(1) amortised per changed record. Ids are unique only within an
agent/conversation scope, so scopes sharing a table never touch each other's rows.
A crash mid-flush leaves the archive's sync point unmoved, so the next open rebuilds
the hot set from the archive. Fragments are compacted and old versions cleaned up
once `compact_every` versions have accumulated. `uri` may be a local path or any URI
LanceDB accepts (`s3://bucket/prefix`, ...), passed through unchanged. A table
written by an older schema (no `seq`) is dropped on open (`reset`), and the engine
rebuilds it from the archive.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from datetime import timedelta
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from arms.neuromorphic.records import FactRow, Tier, parse_tier
from arms.neuromorphic.workingset import WorkingSet

TABLE = "hot_records"
_LABELS = [Tier(t).label for t in range(len(Tier))]
MIN_STALE = 1024
"""Superseded rows and tombstones tolerated before a scope is rewritten, at least."""
REWRITE_ROWS = 4096
"""Rows converted to Arrow at a time when a scope is rewritten (`replace`): the rewrite
of a 60K-row scope held it whole, about 190 MB for a moment (vectors and texts twice)."""


def hot_schema(dim: int) -> pa.Schema:
    """The LanceDB schema of hot records (one row per record, scoped)."""
    return pa.schema(
        [
            ("id", pa.int64()),
            ("agent_id", pa.string()),
            ("conversation_id", pa.string()),
            ("entity_name", pa.string()),
            ("fact_content", pa.string()),
            ("memory_type", pa.string()),
            ("w", pa.float64()),
            ("k", pa.int64()),
            ("created_at_turn", pa.int64()),
            ("last_reinforced_turn", pa.int64()),
            ("valid_at", pa.int64()),
            ("invalid_at", pa.int64()),
            ("related_entities", pa.list_(pa.string())),
            ("source_ids", pa.list_(pa.string())),
            ("valid_date", pa.string()),
            ("invalid_date", pa.string()),
            ("invalid_reason", pa.string()),
            ("vector", pa.list_(pa.float32(), dim)),
            ("seq", pa.int64()),
            ("tombstone", pa.bool_()),
        ]
    )


def scope_filter(agent_id: str, conversation_id: str) -> str:
    """A LanceDB SQL filter selecting one scope (quotes escaped)."""
    a, c = (v.replace("'", "''") for v in (agent_id, conversation_id))
    return f"agent_id = '{a}' AND conversation_id = '{c}'"


def ids_filter(agent_id: str, conversation_id: str, ids: Iterable[int]) -> str:
    """A LanceDB SQL filter selecting these record ids of one scope."""
    listed = ", ".join(str(int(i)) for i in sorted(set(ids)))
    return f"{scope_filter(agent_id, conversation_id)} AND id IN ({listed})"


class HotStore:
    """One LanceDB table holding the hot records of any number of scopes."""

    def __init__(self, uri: str, dim: int) -> None:
        import lancedb

        self.uri = uri
        self.dim = dim
        self._db = lancedb.connect(uri)
        schema = hot_schema(dim)
        try:
            self._table = self._db.create_table(TABLE, schema=schema, exist_ok=True)
        except ValueError:  # an older layout (no seq): dropped, the engine rebuilds it
            self._db.drop_table(TABLE)
            self._table = self._db.create_table(TABLE, schema=schema)
        self._compacted_at = self._table.version
        self._rows: dict[tuple[str, str], int] = {}
        """Rows stored per scope, superseded ones and tombstones included."""

    def load(self, agent_id: str, conversation_id: str) -> tuple[WorkingSet, int]:
        """The alive records of one scope as a working set, in id order, and the last seq.

        The last seq (0 when the scope has no rows) tells the caller which flush the
        rows come from, so a table dropped or written by another layout is never trusted.
        """
        data = (
            self._table.search()
            .where(scope_filter(agent_id, conversation_id))
            .limit(None)
            .to_arrow()
            .sort_by([("id", "ascending"), ("seq", "ascending")])
        )
        ids = data.column("id").to_numpy()
        last_seq = int(pc.max(data.column("seq")).as_py() or 0) if len(ids) else 0
        latest = np.ones(len(ids), dtype=bool)
        latest[:-1] = ids[1:] != ids[:-1]  # the last (highest seq) row of each id
        keep = latest & ~data.column("tombstone").to_numpy(zero_copy_only=False)
        data = data.filter(pa.array(keep))
        self._rows[(agent_id, conversation_id)] = len(ids)
        ws = WorkingSet(self.dim, capacity=max(64, data.num_rows))
        vectors = np.asarray(data.column("vector").combine_chunks().flatten(), dtype=np.float32)
        vectors = vectors.reshape(data.num_rows, self.dim)
        for i, row in enumerate(data.drop_columns(["vector"]).to_pylist()):
            ws.add_state(_fact_row(row, vectors[i]), _numbers(row), _validity(row))
        ws.dirty.clear()
        return ws, last_seq

    def sync(
        self, agent_id: str, conversation_id: str, ws: WorkingSet, ids: Iterable[int], seq: int
    ) -> None:
        """Append these records' state at `seq` (tombstones for removed ones), one write.

        Once the scope's superseded rows and tombstones would outnumber
        max(MIN_STALE, its live rows), the scope is rewritten instead (`replace`).
        """
        ids = sorted(set(ids))
        if not ids:
            return
        scope = (agent_id, conversation_id)
        stored = self._rows.get(scope, 0) + len(ids)
        live = int(ws.alive[: ws.n].sum())
        if stored - live > max(MIN_STALE, live):
            self.replace(agent_id, conversation_id, ws, seq)
            return
        rows = [r for i in ids if (r := ws.row_of.get(i)) is not None and ws.alive[r]]
        alive = {ws.ids[r] for r in rows}
        gone = [i for i in ids if i not in alive]
        parts = []
        if rows:
            parts.append(_to_arrow(ws, sorted(rows), agent_id, conversation_id, self.dim, seq))
        if gone:
            parts.append(_tombstones(gone, agent_id, conversation_id, self.dim, seq))
        self._table.add(pa.concat_tables(parts))
        self._rows[scope] = stored

    def replace(self, agent_id: str, conversation_id: str, ws: WorkingSet, seq: int) -> None:
        """Replace one scope's rows with `ws` (after a rebuild or rollback, and to compact)."""
        self._table.delete(scope_filter(agent_id, conversation_id))
        rows = [int(r) for r in np.flatnonzero(ws.alive[: ws.n])]
        if rows:  # one write of REWRITE_ROWS-row batches: never the whole scope as one table
            slices = (rows[i : i + REWRITE_ROWS] for i in range(0, len(rows), REWRITE_ROWS))
            self._table.add(
                batch
                for part in slices
                for batch in _to_arrow(
                    ws, part, agent_id, conversation_id, self.dim, seq
                ).to_batches()
            )
        self._rows[(agent_id, conversation_id)] = len(rows)

    def maybe_compact(self, every: int) -> bool:
        """Compact fragments and drop old versions once `every` versions have accumulated."""
        if self._table.version - self._compacted_at < every:
            return False
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # single writer: dropping old versions is safe
            self._table.optimize(cleanup_older_than=timedelta(seconds=0))
        self._compacted_at = self._table.version
        return True

    def search(
        self, agent_id: str, conversation_id: str, qvec: np.ndarray, k: int
    ) -> list[tuple[int, float]]:
        """LanceDB cosine search over one scope's valid records: (id, cosine) best first.

        A diagnostic read: the scope is first rewritten from its latest rows, so no
        superseded row or tombstone can be among the hits.
        """
        scope = (agent_id, conversation_id)
        ws, seq = self.load(*scope)
        if self._rows[scope] > ws.n:
            self.replace(agent_id, conversation_id, ws, seq)
        where = f"{scope_filter(agent_id, conversation_id)} AND invalid_at < 0"
        query: Any = self._table.search(np.asarray(qvec, dtype=np.float32))
        hits = query.distance_type("cosine").where(where, prefilter=True).limit(k).to_arrow()
        ids, distances = hits.column("id").to_pylist(), hits.column("_distance").to_pylist()
        return [(int(i), 1.0 - float(d)) for i, d in zip(ids, distances, strict=True)]

    def versions(self) -> int:
        """Number of table versions currently kept."""
        return len(self._table.list_versions())


def _to_arrow(
    ws: WorkingSet, rows: list[int], agent: str, conv: str, dim: int, seq: int
) -> pa.Table:
    idx = np.asarray(rows, dtype=np.int64)
    invalid = ws.invalid_at[idx]
    data: dict[str, Any] = {
        "id": [ws.ids[r] for r in rows],
        "agent_id": [agent] * len(rows),
        "conversation_id": [conv] * len(rows),
        "entity_name": [ws.entity[r] for r in rows],
        "fact_content": [ws.content[r] for r in rows],
        "memory_type": [_LABELS[t] for t in ws.tier[idx].tolist()],
        "w": ws.w[idx],
        "k": ws.k[idx],
        "created_at_turn": ws.created[idx],
        "last_reinforced_turn": ws.reinforced[idx],
        "valid_at": ws.valid_at[idx],
        "invalid_at": invalid,
        "related_entities": [list(ws.related[r]) for r in rows],
        "source_ids": [list(ws.sources[r]) for r in rows],
        "valid_date": [ws.valid_date[r] for r in rows],
        "invalid_date": [ws.invalid_date[r] for r in rows],
        "invalid_reason": [ws.reason[r] for r in rows],
        "vector": pa.FixedSizeListArray.from_arrays(
            pa.array(ws.vectors(rows).ravel(), type=pa.float32()), dim
        ),
        "seq": np.full(len(rows), seq, dtype=np.int64),
        "tombstone": np.zeros(len(rows), dtype=bool),
    }
    return pa.table(data, schema=hot_schema(dim))


def _tombstones(ids: list[int], agent: str, conv: str, dim: int, seq: int) -> pa.Table:
    """Rows marking `ids` as removed from the hot set at `seq` (their other fields unused)."""
    n = len(ids)
    zeros = np.zeros(n, dtype=np.int64)
    data: dict[str, Any] = {
        "id": ids,
        "agent_id": [agent] * n,
        "conversation_id": [conv] * n,
        "entity_name": [""] * n,
        "fact_content": [""] * n,
        "memory_type": ["CoreAnchor"] * n,
        "w": np.zeros(n),
        "k": zeros,
        "created_at_turn": zeros,
        "last_reinforced_turn": zeros,
        "valid_at": zeros,
        "invalid_at": zeros - 1,
        "related_entities": [[]] * n,
        "source_ids": [[]] * n,
        "valid_date": [""] * n,
        "invalid_date": [None] * n,
        "invalid_reason": [None] * n,
        "vector": pa.FixedSizeListArray.from_arrays(
            pa.array(np.zeros(n * dim, dtype=np.float32)), dim
        ),
        "seq": np.full(n, seq, dtype=np.int64),
        "tombstone": np.ones(n, dtype=bool),
    }
    return pa.table(data, schema=hot_schema(dim))


def _tier(row: dict[str, Any]) -> Tier:
    tier = parse_tier(row["memory_type"])  # Tier.CORE is 0: never `or` a default here
    if tier is None:
        raise ValueError(f"hot store: unknown memory_type {row['memory_type']!r}")
    return tier


def _fact_row(row: dict[str, Any], vector: np.ndarray) -> FactRow:
    tier = _tier(row)
    return FactRow(
        id=row["id"],
        turn=row["created_at_turn"],
        entity_name=row["entity_name"],
        fact_content=row["fact_content"],
        tier=tier,
        related=tuple(row["related_entities"] or ()),
        valid_date=row["valid_date"],
        source_ids=tuple(row["source_ids"] or ()),
        embedding=vector,
    )


def _numbers(row: dict[str, Any]) -> dict[str, Any]:
    tier = _tier(row)
    return {
        "w": row["w"],
        "k": row["k"],
        "tier": int(tier),
        "created": row["created_at_turn"],
        "reinforced": row["last_reinforced_turn"],
    }


def _validity(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "valid_at": row["valid_at"],
        "invalid_at": row["invalid_at"],
        "invalid_date": row["invalid_date"],
        "reason": row["invalid_reason"],
    }
