"""Damaged stores and caches are rebuilt or moved aside, never trusted (issue 8, item 4)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bench.arm.checkpoint import IngestCheckpoint
from bench.providers.cache import ResponseCache, _connect


def test_a_corrupt_cache_is_moved_aside_and_a_new_one_started(tmp_path: Path, caplog) -> None:
    path = tmp_path / "cache" / "responses.sqlite"
    path.parent.mkdir()
    path.write_bytes(b"this is not a database" * 100)
    conn = _connect(path)
    conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    conn.close()
    aside = list(path.parent.glob("responses.sqlite.corrupt-*"))
    assert len(aside) == 1 and aside[0].read_bytes().startswith(b"this is not")
    assert "is corrupt" in caplog.text
    assert ResponseCache(path, "readwrite").mode == "readwrite"


def test_an_unparsable_checkpoint_rebuilds_the_store(tmp_path: Path, caplog) -> None:
    root = tmp_path / "stores" / "rag"
    folder = root / "conv"
    folder.mkdir(parents=True)
    (folder / "data.bin").write_text("half-built")
    (folder / "checkpoint.json").write_text('{"key": "abc", "sta')
    checkpoint = IngestCheckpoint(folder, {"kind": "rag"}, root=root)
    assert checkpoint.load() is None
    assert not folder.exists() and root.exists()
    assert "checkpoint does not parse" in caplog.text
    checkpoint.save({"chunks": 3}, complete=True)
    assert json.loads((folder / "checkpoint.json").read_text())["complete"] is True
    assert (checkpoint.load() or {}).get("complete") is True


@pytest.mark.slow
def test_a_deleted_hot_table_is_rebuilt_and_answers_as_before(tmp_path: Path) -> None:
    from tests.support.e2e_support import load_records, run_cli, strip_timings

    args = ("dataset=smoke", "arms=[neuromorphic]", "progress=false")
    ref, run = tmp_path / "ref", tmp_path / "run"
    assert run_cli(*args, f"out={ref}").returncode == 0
    assert run_cli(*args, f"out={run}").returncode == 0
    shutil.rmtree(run / "stores" / "neuromorphic" / "smoke-1" / "hot.lance")
    for record in (run / "questions").glob("smoke-1_*.json"):
        record.unlink()
    orphan = run / "questions" / ".x.json.abc123.tmp"
    orphan.write_text("{")
    proc = run_cli(*args, f"out={run}")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "hot.lance is missing; rebuilding it from zero" in proc.stdout + proc.stderr
    assert not orphan.exists()
    a, b = load_records(ref), load_records(run)
    assert a.keys() == b.keys()
    assert all(strip_timings(a[q]) == strip_timings(b[q]) for q in a)
