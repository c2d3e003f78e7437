"""Content-keyed SQLite response cache for chat completions and embeddings.

The key is the SHA-256 of a canonical JSON of everything that determines the answer:
kind, base URL, model, messages or text, sampling parameters, tools and prompt
version. The API key is never part of it. Modes: `off`, `read` (use hits, store
nothing), `write` (always call, store results) and `readwrite` (the default).
A stored reply that its caller later finds unusable (an unparsable judge verdict, an
answer that is empty after post-processing) is deleted with `forget_reply`, so the next
run asks the server again instead of replaying the same bad reply forever.
One connection is shared by the threads of a process behind a lock; WAL mode and a
busy timeout let shards in other processes share the file.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from pathlib import Path
from typing import Protocol, runtime_checkable

from bench.errors import ConfigError
from bench.hashing import content_key
from bench.providers.base import CallOptions, Message, Tool
from bench.typed_json import JSONObject
from bench.untrusted import UntrustedJSONError, expect_object, parse_json

log = logging.getLogger("bench.providers")

MODES = ("off", "read", "write", "readwrite")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    value BLOB NOT NULL,
    created REAL NOT NULL
)
"""
_QUARANTINE = """
CREATE TABLE IF NOT EXISTS quarantined (
    key TEXT NOT NULL,
    kind TEXT NOT NULL,
    value BLOB NOT NULL,
    created REAL NOT NULL,
    why TEXT NOT NULL,
    moved REAL NOT NULL
)
"""


def cache_key(**parts: object) -> str:
    """SHA-256 hex of the canonical JSON of `parts` (`bench.hashing.content_key`)."""
    return content_key(parts)


def repeat_version(version: str, repeat: int) -> str:
    """The prompt version a `repeats=N` draw is cached under: its own key per repeat.

    Repeat 0 keeps `version` (the single-run key, so existing caches stay valid); repeat
    r >= 1 asks with `<version>#repeat<r>`. The request sent is the same for every repeat.
    """
    return f"{version}#repeat{repeat}" if repeat else version


class ResponseCache:
    """A key → bytes store with read/write switched by `mode`."""

    def __init__(self, path: Path | None, mode: str) -> None:
        if mode not in MODES:
            raise ConfigError(f"provider.cache.mode={mode!r}: expected one of {', '.join(MODES)}")
        self.mode = mode
        self.path = path
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._closed = False
        if mode != "off" and path is None:
            raise ConfigError("provider.cache.path: a path is required unless mode=off")

    def _db(self) -> sqlite3.Connection | None:
        """The connection, opened on first use (call with the lock held)."""
        if self._conn is None and self.mode != "off" and not self._closed:
            assert self.path is not None
            self._conn = _connect(self.path)
        return self._conn

    @property
    def reads(self) -> bool:
        """True when hits are served."""
        return self.mode in ("read", "readwrite")

    @property
    def writes(self) -> bool:
        """True when new responses are stored."""
        return self.mode in ("write", "readwrite")

    def get(self, key: str) -> bytes | None:
        """The stored value, or None on a miss (or when reading is off)."""
        if not self.reads:
            return None
        with self._lock:
            db = self._db()
            if db is None:
                return None
            row = db.execute("SELECT value FROM responses WHERE key = ?", (key,)).fetchone()
        return bytes(row[0]) if row else None

    def get_many(self, keys: list[str]) -> dict[str, bytes]:
        """The stored values for those of `keys` that are present (empty when not reading)."""
        if not self.reads or not keys:
            return {}
        found: dict[str, bytes] = {}
        with self._lock:
            db = self._db()
            if db is None:
                return {}
            for start in range(0, len(keys), 500):
                chunk = keys[start : start + 500]
                marks = ",".join("?" * len(chunk))
                query = f"SELECT key, value FROM responses WHERE key IN ({marks})"
                found.update((k, bytes(v)) for k, v in db.execute(query, chunk))
        return found

    def get_json(self, key: str) -> JSONObject | None:
        """A stored JSON object, or None (also for a poisoned row, which is moved aside).

        A row that is not a JSON object (`bench.untrusted`: not UTF-8, malformed, too
        deep, huge numbers) is not what `put_json` wrote: it is quarantined and read as
        a miss, so the next call asks the server again instead of failing every rerun.
        """
        raw = self.get(key)
        if raw is None:
            return None
        try:
            return expect_object(parse_json(raw, f"cache row {key[:16]}"), key)
        except UntrustedJSONError as exc:
            self.quarantine(key, exc.what)
            return None

    def quarantine(self, key: str, why: str) -> None:
        """Move the row under `key` to the `quarantined` table: its reader cannot use it.

        Like a corrupt cache file (moved to `<name>.corrupt-<time>`), a poisoned row is
        kept for inspection, never silently dropped; one warning names it. In `read`
        mode the cache is never changed: the row just reads as a miss.
        """
        log.warning(
            "response cache %s: row %s is unusable (%s); %s",
            self.path,
            key[:16],
            why,
            "moved to table quarantined" if self.writes else "read as a miss",
        )
        if not self.writes:
            return
        with self._lock:
            db = self._db()
            if db is None:
                return
            db.execute(
                "INSERT INTO quarantined (key, kind, value, created, why, moved) "
                "SELECT key, kind, value, created, ?, ? FROM responses WHERE key = ?",
                (why, time.time(), key),
            )
            db.execute("DELETE FROM responses WHERE key = ?", (key,))
            db.commit()

    def put(self, key: str, kind: str, value: bytes) -> None:
        """Store `value` under `key` (no-op unless writing)."""
        self.put_many([(key, kind, value)])

    def put_many(self, rows: list[tuple[str, str, bytes]]) -> None:
        """Store many (key, kind, value) rows in one transaction (no-op unless writing)."""
        if not self.writes or not rows:
            return
        now = time.time()
        with self._lock:
            db = self._db()
            if db is None:
                return
            db.executemany(
                "INSERT OR REPLACE INTO responses (key, kind, value, created) VALUES (?, ?, ?, ?)",
                [(key, kind, value, now) for key, kind, value in rows],
            )
            db.commit()

    def put_json(self, key: str, kind: str, value: JSONObject) -> None:
        """Store a JSON object."""
        self.put(key, kind, json.dumps(value, sort_keys=True).encode("utf-8"))

    def delete(self, key: str) -> None:
        """Remove the entry under `key`, if any (no-op unless writing: `read` never changes it)."""
        if not self.writes:
            return
        with self._lock:
            db = self._db()
            if db is None:
                return
            db.execute("DELETE FROM responses WHERE key = ?", (key,))
            db.commit()

    def count(self) -> int:
        """Number of stored responses (0 when off)."""
        with self._lock:
            db = self._db()
            return (
                0 if db is None else int(db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
            )

    def close(self) -> None:
        """Close the connection; later calls behave as mode `off`."""
        with self._lock:
            self._closed = True
            if self._conn is not None:
                self._conn.close()
                self._conn = None


def _connect(path: Path) -> sqlite3.Connection:
    """Open the cache; a corrupt file is moved aside and a new one started (one warning).

    Corrupt = not a database, or failing `PRAGMA quick_check`. The old file is kept as
    `<name>.corrupt-<UTC time>` (with its -wal/-shm) for inspection, never deleted.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        return _open_checked(path)
    except sqlite3.DatabaseError as exc:
        if isinstance(exc, sqlite3.OperationalError):  # busy or unreadable: not corruption
            raise
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        aside = path.with_name(f"{path.name}.corrupt-{stamp}")
        for suffix in ("", "-wal", "-shm"):
            part = path.with_name(path.name + suffix)
            if part.exists():
                part.replace(aside.with_name(aside.name + suffix))
        log.warning(
            "response cache %s is corrupt (%s); moved to %s, starting a new one", path, exc, aside
        )
        return _open_checked(path)


def _open_checked(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), timeout=30.0, check_same_thread=False)
    try:
        verdict = conn.execute("PRAGMA quick_check").fetchone()
        if not verdict or verdict[0] != "ok":
            raise sqlite3.DatabaseError(f"quick_check: {verdict[0] if verdict else 'no answer'}")
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA busy_timeout=30000")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute(_SCHEMA)
        conn.execute(_QUARANTINE)
        conn.commit()
    except sqlite3.DatabaseError:
        conn.close()
        raise
    return conn


@runtime_checkable
class ForgetsReplies(Protocol):
    """A chat provider whose cached replies can be dropped one request at a time."""

    def forget(
        self,
        messages: list[Message],
        *,
        tools: list[Tool] | None = None,
        prompt_version: str = "",
        options: CallOptions | None = None,
    ) -> None:
        """Delete the cached reply to exactly this request, if there is one."""
        ...


def forget_reply(
    chat: object,
    messages: list[Message],
    *,
    tools: list[Tool] | None = None,
    prompt_version: str = "",
    options: CallOptions | None = None,
) -> bool:
    """Drop `chat`'s cached reply to this request; False when `chat` keeps no cache."""
    if not isinstance(chat, ForgetsReplies):
        return False
    chat.forget(messages, tools=tools, prompt_version=prompt_version, options=options)
    return True
