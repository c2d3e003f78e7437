"""The archive index keeps vectors on disk and facts in the archive (issue 39), same results."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from arms.neuromorphic.archive_index import CACHED
from arms.neuromorphic.records import FactRow, Tier
from arms.neuromorphic.vector_file import CHUNK, VectorFile
from arms.neuromorphic.vectors import BLOCK, cosine_scores
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
