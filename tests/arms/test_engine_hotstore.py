"""The append-only hot table: tombstones, compaction and tables of an older layout."""

from __future__ import annotations

from pathlib import Path

import lancedb
import pyarrow as pa
import pytest

from arms.neuromorphic import hotstore
from arms.neuromorphic.config import NeuromorphicConfig
from arms.neuromorphic.engine import MemoryEngine
from arms.neuromorphic.records import FactDraft, Tier
from arms.neuromorphic.rollback import replay
from tests.arms.test_engine_support import HashEmbedder, ScriptedExtractor, draft, tick


def _script() -> dict[int, list[FactDraft]]:
    """Facts that are superseded, pruned, reinforced: many rows change every flush."""
    return {
        t: [
            draft(f"Ann thing {t % 3}", f"Ann fact {t}"),
            draft(f"Ann mood {t}", f"Ann feels tired {t}", Tier.EPHEMERAL),
        ]
        for t in range(1, 40)
    }


def _run(mem: MemoryEngine, until: int) -> None:
    while mem.turn < until:
        mem.process_exchange(tick(mem.turn + 1))


def _rows(path: Path) -> int:
    return int(lancedb.connect(str(path / "hot.lance")).open_table(hotstore.TABLE).count_rows())


def test_flushes_append_and_compaction_bounds_the_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hotstore, "MIN_STALE", 8)
    cfg = NeuromorphicConfig(lambda_active=0.4, flush_every=3, hot_sync_every=1)
    mem = MemoryEngine(tmp_path, HashEmbedder(), cfg, extractor=ScriptedExtractor(_script()))
    _run(mem, 39)
    mem.flush()
    live = int(mem.state.ws.alive[: mem.state.ws.n].sum())
    assert mem.counters["pruned_deleted"] > 0 and mem.counters["superseded"] > 0
    assert live < _rows(tmp_path) <= 2 * max(8, live) + live  # appended, and compacted
    snapshot = mem.state.ws.snapshot()
    mem.close()
    again = MemoryEngine(tmp_path, HashEmbedder(), cfg, extractor=ScriptedExtractor())
    assert again.loaded_from == "lancedb" and again.state.ws.snapshot() == snapshot
    rebuilt = replay(again.archive.events(), again.archive.facts(), HashEmbedder.dim)
    assert rebuilt.ws.snapshot() == snapshot
    again.close()


def test_a_table_of_the_older_layout_is_rebuilt_from_the_archive(tmp_path: Path) -> None:
    cfg = NeuromorphicConfig(flush_every=3)
    mem = MemoryEngine(tmp_path, HashEmbedder(), cfg, extractor=ScriptedExtractor(_script()))
    _run(mem, 10)
    snapshot = mem.state.ws.snapshot()
    mem.close()
    db = lancedb.connect(str(tmp_path / "hot.lance"))
    old = pa.schema([f for f in hotstore.hot_schema(HashEmbedder.dim) if f.name != "seq"])
    db.drop_table(hotstore.TABLE)
    db.create_table(hotstore.TABLE, schema=old)  # what the previous release wrote, emptied
    again = MemoryEngine(tmp_path, HashEmbedder(), cfg, extractor=ScriptedExtractor())
    assert again.loaded_from == "archive" and again.state.ws.snapshot() == snapshot
    again.close()
    third = MemoryEngine(tmp_path, HashEmbedder(), cfg, extractor=ScriptedExtractor())
    assert third.loaded_from == "lancedb" and third.state.ws.snapshot() == snapshot
    third.close()


def test_the_hot_table_is_written_every_hot_sync_every_flushes(tmp_path: Path) -> None:
    cfg = NeuromorphicConfig(flush_every=2, hot_sync_every=3)
    mem = MemoryEngine(tmp_path, HashEmbedder(), cfg, extractor=ScriptedExtractor(_script()))
    _run(mem, 5)  # archive flushes at 2 and 4: nothing appended to LanceDB yet
    assert _rows(tmp_path) == 0 and mem.archive.meta().get("hot_synced_seq") is None
    _run(mem, 6)  # the third flush writes the hot set
    assert mem.hot.load(*mem.scope)[0].snapshot() == mem.state.ws.snapshot()
    _run(mem, 9)
    snapshot = mem.state.ws.snapshot()
    mem.abort()  # the archive holds turn 8; the hot table only turn 6
    again = MemoryEngine(tmp_path, HashEmbedder(), cfg, extractor=ScriptedExtractor())
    assert again.turn == 8 and again.loaded_from == "archive"
    script = ScriptedExtractor(_script())
    clean = MemoryEngine(tmp_path / "b", HashEmbedder(), cfg, extractor=script)
    _run(clean, 8)
    assert again.state.ws.snapshot() == clean.state.ws.snapshot() != snapshot
    again.close()
    clean.close()


def test_a_scope_rewrite_in_slices_is_one_write_and_reads_back_equal(tmp_path: Path) -> None:
    """`replace` of a scope larger than `REWRITE_ROWS` converts it a slice at a time
    (`python -m bench.perf engine`, `hot_rewrite`: 60,000 rows added 192 MB to the peak as
    one table, 90 MB in slices) and still writes it once: one delete and one append, with
    every row, in order, read back as it was."""
    import numpy as np

    from arms.neuromorphic.records import FactRow
    from arms.neuromorphic.workingset import WorkingSet

    rows, dim = 3 * hotstore.REWRITE_ROWS + 5, 8
    vectors = np.random.default_rng(0).standard_normal((rows, dim)).astype(np.float32)
    ws = WorkingSet(dim, capacity=rows)
    for i in range(rows):
        at = (f"D1:{i}",)
        fact = FactRow(
            i + 1, i + 1, f"e {i % 97}", f"fact {i}", Tier.ACTIVE, (), "8 May", at, vectors[i]
        )
        ws.add(fact, i + 1)
    store = hotstore.HotStore(str(tmp_path / "hot.lance"), dim)
    store.replace("a", "c", ws, 1)
    versions = store.versions()
    store.replace("a", "c", ws, 2)
    assert store.versions() == versions + 2  # the delete and ONE append
    back, seq = store.load("a", "c")
    assert seq == 2 and back.snapshot() == ws.snapshot()
