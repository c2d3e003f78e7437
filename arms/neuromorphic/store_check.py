"""Is a saved engine store what its checkpoint says? (issue 8: never trust, rebuild).

A store is rebuilt from zero, with one log line, when its files disagree with its
checkpoint: the archive missing or failing SQLite's `PRAGMA quick_check`, the hot
table missing while the checkpoint counts hot rows, or counters of the reopened
engine differing from the ones saved at the last flush.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

COUNTERS = ("hot_rows", "archived_facts", "turn")
"""Engine stats that must equal the checkpoint's after reopening a store."""


def file_problem(folder: Path, saved: dict[str, Any]) -> str | None:
    """Why the store's files cannot be what `saved` describes, or None when they can."""
    archive = folder / "archive.sqlite"
    if not archive.is_file():
        return "archive.sqlite is missing"
    try:
        with closing(sqlite3.connect(f"file:{archive}?mode=ro", uri=True)) as conn:
            verdict = conn.execute("PRAGMA quick_check").fetchone()
    except sqlite3.DatabaseError as exc:
        return f"archive.sqlite is unreadable ({exc})"
    if not verdict or verdict[0] != "ok":
        return f"archive.sqlite fails quick_check ({verdict[0] if verdict else 'no answer'})"
    if int(saved.get("hot_rows") or 0) > 0 and not (folder / "hot.lance").is_dir():
        return "hot.lance is missing"
    return None


def counter_problem(stats: dict[str, Any], saved: dict[str, Any]) -> str | None:
    """Which saved counter the reopened engine disagrees with, or None."""
    for key in COUNTERS:
        if key in saved and stats.get(key) != saved[key]:
            return f"{key} is {stats.get(key)} but the checkpoint says {saved[key]}"
    return None
