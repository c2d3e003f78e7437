"""The archive index keeps vectors on disk and facts in the archive (issue 39), same results."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from arms.neuromorphic.archive_index import CACHED
from arms.neuromorphic.records import FactRow, Tier
from arms.neuromorphic.vector_file import CHUNK, VectorFile
from arms.neuromorphic.vectors import BLOCK, cosine_scores
from arms.neuromorphic.workingset import WorkingSet
from tests.arms.test_engine_support import ScriptedExtractor, draft, engine, tick


def test_scores_equal_the_in_memory_blocks_bit_for_bit(tmp_path: Path) -> None:
    """Across block and chunk edges, the file's scan is `cosine_scores` of the matrix."""
    rng = np.random.default_rng(3)
    dim = 8
    total = CHUNK * BLOCK + 2 * BLOCK + 5
    matrix = rng.standard_normal((total, dim)).astype(np.float32)
    qvec = rng.standard_normal(dim).astype(np.float32)
    vectors = VectorFile(dim, tmp_path)
    sizes = {0, 1, 4, 5, BLOCK - 1, BLOCK, BLOCK + 1, 3 * BLOCK + 7, CHUNK * BLOCK, total}
    for n in range(total + 1):
        if n in sizes:
            assert vectors.on_disk == n - n % BLOCK  # only the partial block is in memory
            want = cosine_scores(matrix, n, qvec)
            assert vectors.scores(qvec).tobytes() == want.tobytes(), n
            positions = [int(p) for p in rng.integers(0, max(n, 1), size=min(n, 9))]
            assert vectors.rows(positions).tobytes() == matrix[positions].tobytes()
        if n < total:
            vectors.append(matrix[n])
    vectors.close()
    assert not list(tmp_path.iterdir())  # the file was never linked into the folder


def test_archived_facts_are_read_back_from_the_archive(tmp_path: Path) -> None:
    """Once written, the index holds no fact; history and recall read them back unchanged."""
    script = {t: [draft(f"item {t}", f"item {t} is colour {t}")] for t in range(1, 8)}
    script[8] = [draft("item 1", "item 1 is colour 9", overrides_entity="item 1")]
    mem = engine(tmp_path, ScriptedExtractor(script))
    for t in range(8):
        mem.process_exchange(tick(t + 1))
    index = mem.state.index
    want = mem.archive.facts()
    assert sorted(index.facts) == sorted(want) and len(index.facts) == 8
    got = index.rows(sorted(want))
    assert [
        (f.id, f.entity_name, f.fact_content, f.tier, f.related, f.valid_date, f.source_ids)
        for f in got
    ] == [
        (f.id, f.entity_name, f.fact_content, f.tier, f.related, f.valid_date, f.source_ids)
        for f in want.values()
    ]
    pairs = zip(got, want.values(), strict=True)
    assert all(a.embedding.tobytes() == b.embedding.tobytes() for a, b in pairs)
    history = mem.history("item 1")
    assert [f.fact_content for f in history] == ["item 1 is colour 1", "item 1 is colour 9"]
    assert history[0].invalid_reason == "superseded"
    mem.close()


def test_the_read_back_cache_is_bounded() -> None:
    """Without a source every fact is held; the cache of read-back facts has a fixed cap."""
    from arms.neuromorphic.archive_index import ArchiveIndex

    index = ArchiveIndex(4)
    vec = np.ones(4, dtype=np.float32) / 2
    for i in range(3):
        index.add_fact(FactRow(i + 1, 1, f"e{i}", "x", Tier.ACTIVE, (), "d", (), vec))
    index.facts.settle()  # no source: nothing to read back from, so all stay
    assert [f.entity_name for f in index.rows([3, 1])] == ["e2", "e0"]
    assert CACHED >= 100  # a search's hits (tens) fit


def test_rows_read_across_chunks_and_the_tail_and_refuse_a_bad_position(
    tmp_path: Path,
) -> None:
    """`rows` copies from one map per chunk; any order, repeats, and the in-memory tail."""
    rng = np.random.default_rng(5)
    dim = 4
    total = 2 * CHUNK * BLOCK + BLOCK // 2  # two chunks on disk, half a block in memory
    matrix = rng.standard_normal((total, dim)).astype(np.float32)
    vectors = VectorFile(dim, tmp_path)
    for row in matrix:
        vectors.append(row)
    positions = [total - 1, 0, CHUNK * BLOCK, CHUNK * BLOCK - 1, 7, 7, vectors.on_disk, 3]
    assert vectors.rows(positions).tobytes() == matrix[positions].tobytes()
    assert vectors.rows([]).shape == (0, dim)
    for bad in ([total], [-1]):
        with pytest.raises(IndexError, match="out of range"):
            vectors.rows(bad)
    vectors.close()


def test_hot_rows_read_their_vectors_from_the_archive_not_a_second_copy(
    tmp_path: Path,
) -> None:
    """Placed rows hold no vector; they read the archive's bytes, through compaction too.

    A row is held only until its archive position is known, and a working set without a
    source keeps every vector itself (what `WorkingSet` alone always did).
    """
    script = {t: [draft(f"item {t}", f"item {t} is colour {t}")] for t in range(1, 9)}
    script[9] = [draft("item 1", "item 1 is colour 9", overrides_entity="item 1")]
    mem = engine(tmp_path, ScriptedExtractor(script))
    for t in range(9):
        mem.process_exchange(tick(t + 1))
    ws, facts = mem.state.ws, mem.archive.facts()
    assert ws.n == 9 and ws.held == {}  # every row placed: no vector held twice
    rows = list(range(ws.n))
    want = np.stack([facts[ws.ids[r]].embedding for r in rows]).astype(np.float32)
    assert ws.vectors(rows).tobytes() == want.tobytes()
    assert ws.matrix()[2:5].tobytes() == want[2:5].tobytes()
    mem.close()

    alone = WorkingSet(4)
    vecs = np.eye(4, dtype=np.float32)
    for i in range(70):
        alone.add(FactRow(i + 1, 1, f"e{i}", "x", Tier.ACTIVE, (), "d", (), vecs[i % 4]), 1)
    alone.place(3, 3)  # no source: the row keeps its own vector
    assert len(alone.held) == 70
    alone.remove(list(range(0, 70, 2)))
    assert alone.compact() is True and alone.n == 35 and sorted(alone.held) == list(range(35))
    assert alone.vectors([0, 1]).tobytes() == vecs[[1, 3]].tobytes()  # old rows 1 and 3


def test_a_working_set_placed_on_a_source_reads_the_source() -> None:
    """`attach` lets placed rows go; an unplaced row (-1) keeps its own; compaction keeps both."""
    from arms.neuromorphic.archive_index import ArchiveIndex

    rng = np.random.default_rng(9)
    vecs = rng.standard_normal((70, 4)).astype(np.float32)
    index, ws = ArchiveIndex(4), WorkingSet(4)
    for i in range(70):
        fact = FactRow(i + 1, 1, f"e{i}", "x", Tier.ACTIVE, (), "d", (), vecs[i])
        index.add_fact(fact)
        ws.add(fact, 1)
    ws.attach(index, [-1 if i % 10 == 1 else i for i in range(70)])
    assert sorted(ws.held) == list(range(1, 70, 10))
    assert ws.vectors([2, 1, 0]).tobytes() == vecs[[2, 1, 0]].tobytes()
    ws.remove(list(range(0, 70, 2)))  # the odd rows stay, in order
    assert ws.compact() is True and ws.n == 35
    assert sorted(ws.held) == [i // 2 for i in range(1, 70, 10)]
    assert ws.vectors(list(range(35))).tobytes() == vecs[1::2].tobytes()
