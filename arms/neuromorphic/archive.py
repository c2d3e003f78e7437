"""The cold archive: SQLite in WAL mode, an append-only event log, facts with FTS5.

Nothing here is ever updated or deleted (triggers refuse it); state changes are events,
and rollback is itself an event. Writes of one flush interval share one transaction,
so a crash loses at most the exchanges since the last flush, never half of one.
Every read and write carries the `agent_id`/`conversation_id` scope.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from arms.neuromorphic.records import Event, FactRow, Tier
from bench.text import STOPWORDS

SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
  seq INTEGER PRIMARY KEY, agent_id TEXT NOT NULL, conversation_id TEXT NOT NULL,
  turn INTEGER NOT NULL, kind TEXT NOT NULL, payload TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS events_scope ON events(agent_id, conversation_id, seq);
CREATE TABLE IF NOT EXISTS facts (
  id INTEGER PRIMARY KEY, agent_id TEXT NOT NULL, conversation_id TEXT NOT NULL,
  turn INTEGER NOT NULL, entity_name TEXT NOT NULL, fact_content TEXT NOT NULL,
  memory_type TEXT NOT NULL, related TEXT NOT NULL, valid_date TEXT NOT NULL,
  source_ids TEXT NOT NULL, embedding BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS facts_scope ON facts(agent_id, conversation_id, id);
CREATE VIRTUAL TABLE IF NOT EXISTS facts_fts USING fts5(
  entity_name, fact_content, content='facts', content_rowid='id',
  tokenize='porter unicode61');
CREATE TABLE IF NOT EXISTS meta (
  agent_id TEXT NOT NULL, conversation_id TEXT NOT NULL, key TEXT NOT NULL, value TEXT,
  PRIMARY KEY (agent_id, conversation_id, key));
CREATE TABLE IF NOT EXISTS extraction_errors (
  id INTEGER PRIMARY KEY, agent_id TEXT NOT NULL, conversation_id TEXT NOT NULL,
  turn INTEGER NOT NULL, kind TEXT NOT NULL, message TEXT NOT NULL, raw TEXT NOT NULL);
"""
_APPEND_ONLY = """
CREATE TRIGGER IF NOT EXISTS {table}_no_{op} BEFORE {op} ON {table}
BEGIN SELECT RAISE(ABORT, 'the cold archive is append-only'); END;
"""
_TERM = re.compile(r"[a-z0-9]+")


def query_terms(text: str) -> list[str]:
    """The distinct lower-cased non-stopword terms of `text`, in order."""
    words = dict.fromkeys(_TERM.findall(text.lower()))  # distinct, first-seen order
    return [term for term in words if len(term) > 1 and term not in STOPWORDS]


class ColdArchive:
    """One SQLite file; this object reads and writes one scope of it."""

    def __init__(self, path: Path, agent_id: str, conversation_id: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.folder = path.parent
        self.scope = (agent_id, conversation_id)
        self._conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute("PRAGMA busy_timeout=30000")
        self._conn.executescript(SCHEMA)
        for table in ("events", "facts"):
            for op in ("UPDATE", "DELETE"):
                self._conn.executescript(_APPEND_ONLY.format(table=table, op=op))
        self._in_tx = False
        self._next_id = 0

    # ---- transactions -----------------------------------------------------------------
    def _begin(self) -> None:
        if not self._in_tx:
            self._conn.execute("BEGIN IMMEDIATE")
            self._in_tx = True
            row = self._conn.execute("SELECT COALESCE(MAX(id), 0) FROM facts").fetchone()
            self._next_id = int(row[0]) + 1

    @property
    def in_transaction(self) -> bool:
        """True while writes since the last commit are pending."""
        return self._in_tx

    def new_fact_id(self) -> int:
        """A fresh fact id (unique in the file; taken inside the write transaction)."""
        self._begin()
        fid = self._next_id
        self._next_id += 1
        return fid

    def commit(self) -> None:
        """Make everything written since the last commit durable."""
        if self._in_tx:
            self._conn.execute("COMMIT")
            self._in_tx = False

    def abort(self) -> None:
        """Discard everything written since the last commit."""
        if self._in_tx:
            self._conn.execute("ROLLBACK")
            self._in_tx = False

    def close(self) -> None:
        """Roll back anything uncommitted and close the file."""
        self.abort()
        self._conn.close()

    # ---- writes -----------------------------------------------------------------------
    def write(self, events: list[tuple[int, str, dict[str, Any]]], facts: list[FactRow]) -> None:
        """Append events `(turn, kind, payload)` and facts (with their FTS rows)."""
        if not events and not facts:
            return
        self._begin()
        a, c = self.scope
        if facts:  # an empty executemany still costs a statement lookup
            self._write_facts(facts)
        if events:
            self._conn.executemany(
                "INSERT INTO events(agent_id, conversation_id, turn, kind, payload)"
                " VALUES (?,?,?,?,?)",
                [(a, c, turn, kind, json.dumps(payload)) for turn, kind, payload in events],
            )

    def _write_facts(self, facts: list[FactRow]) -> None:
        """Append facts and their FTS rows (inside the open transaction)."""
        a, c = self.scope
        self._conn.executemany(
            "INSERT INTO facts VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            [
                (
                    f.id,
                    a,
                    c,
                    f.turn,
                    f.entity_name,
                    f.fact_content,
                    f.tier.label,
                    json.dumps(f.related),
                    f.valid_date,
                    json.dumps(f.source_ids),
                    np.asarray(f.embedding, dtype=np.float32).tobytes(),
                )
                for f in facts
            ],
        )
        self._conn.executemany(
            "INSERT INTO facts_fts(rowid, entity_name, fact_content) VALUES (?,?,?)",
            [(f.id, f.entity_name, f.fact_content) for f in facts],
        )

    def add_errors(self, turn: int, errors: Iterable[tuple[str, str, str]]) -> None:
        """Record extraction errors `(kind, message, raw)` of one exchange."""
        rows = [(*self.scope, turn, kind, msg, raw) for kind, msg, raw in errors]
        if rows:
            self._begin()
            self._conn.executemany(
                "INSERT INTO extraction_errors(agent_id, conversation_id, turn, kind, message, raw)"
                " VALUES (?,?,?,?,?,?)",
                rows,
            )

    def set_meta(self, values: dict[str, Any]) -> None:
        """Store JSON values under this scope (in the current transaction)."""
        self._begin()
        self._conn.executemany(
            "INSERT OR REPLACE INTO meta VALUES (?,?,?,?)",
            [(*self.scope, key, json.dumps(value)) for key, value in values.items()],
        )

    # ---- reads ------------------------------------------------------------------------
    def meta(self) -> dict[str, Any]:
        """All meta values of this scope."""
        rows = self._conn.execute(
            "SELECT key, value FROM meta WHERE agent_id=? AND conversation_id=?", self.scope
        )
        return {key: json.loads(value) for key, value in rows}

    def events(self, kinds: tuple[str, ...] | None = None) -> list[Event]:
        """This scope's event log in order (only events of `kinds` when given)."""
        only = f" AND kind IN ({','.join('?' * len(kinds))})" if kinds else ""
        rows = self._conn.execute(
            "SELECT seq, turn, kind, payload FROM events"
            f" WHERE agent_id=? AND conversation_id=?{only} ORDER BY seq",
            (*self.scope, *(kinds or ())),
        )
        return [Event(seq, turn, kind, json.loads(payload)) for seq, turn, kind, payload in rows]

    def facts(self) -> dict[int, FactRow]:
        """This scope's archived facts by id."""
        return self._fact_rows("", ())

    def fact_rows(self, ids: Sequence[int]) -> dict[int, FactRow]:
        """The facts of `ids` archived in this scope, by id (one query per 500 ids)."""
        out: dict[int, FactRow] = {}
        for i in range(0, len(ids), 500):
            part = tuple(ids[i : i + 500])
            out.update(self._fact_rows(f" AND id IN ({','.join('?' * len(part))})", part))
        return out

    def _fact_rows(self, where: str, params: tuple[int, ...]) -> dict[int, FactRow]:
        rows = self._conn.execute(
            "SELECT id, turn, entity_name, fact_content, memory_type, related, valid_date,"
            " source_ids, embedding FROM facts WHERE agent_id=? AND conversation_id=?"
            f"{where} ORDER BY id",
            (*self.scope, *params),
        )
        out: dict[int, FactRow] = {}
        for fid, turn, entity, content, tier, related, valid, sources, blob in rows:
            out[fid] = FactRow(
                fid,
                turn,
                entity,
                content,
                _tier(tier),
                tuple(json.loads(related)),
                valid,
                tuple(json.loads(sources)),
                np.frombuffer(blob, dtype=np.float32).copy(),
            )
        return out

    def keyword_search(self, terms: list[str], limit: int) -> list[int]:
        """Fact ids matching any of `terms` (FTS5, BM25 order, ties by id), this scope only.

        The scope test reads the covering index `facts_scope`, not the facts rows (each
        carries its embedding), which cuts about a third off a search over a large archive.
        """
        if not terms or limit <= 0:
            return []
        match = " OR ".join(f'"{t}"' for t in terms)
        rows = self._conn.execute(
            "SELECT f.id FROM facts_fts JOIN facts f INDEXED BY facts_scope"
            " ON f.id = facts_fts.rowid"
            " WHERE facts_fts MATCH ? AND f.agent_id=? AND f.conversation_id=?"
            " ORDER BY bm25(facts_fts), f.id LIMIT ?",
            (match, *self.scope, limit),
        )
        return [fid for (fid,) in rows]

    def read(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """The rows of a read-only query (in-memory indexes built beside the archive)."""
        return self._conn.execute(sql, params).fetchall()

    def last_seq(self) -> int:
        """The sequence number of this scope's latest event (0 when none)."""
        row = self._conn.execute(
            "SELECT COALESCE(MAX(seq), 0) FROM events WHERE agent_id=? AND conversation_id=?",
            self.scope,
        ).fetchone()
        return int(row[0])

    def errors(self) -> list[dict[str, Any]]:
        """Extraction errors of this scope, oldest first."""
        rows = self._conn.execute(
            "SELECT turn, kind, message, raw FROM extraction_errors"
            " WHERE agent_id=? AND conversation_id=? ORDER BY id",
            self.scope,
        )
        return [{"turn": t, "kind": k, "message": m, "raw": r} for t, k, m, r in rows]


def _tier(label: str) -> Tier:
    return next(t for t in Tier if t.label == label)
