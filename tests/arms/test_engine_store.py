"""Persistence, override, rollback and scoping of the engine's stores."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from arms.neuromorphic.config import NeuromorphicConfig
from arms.neuromorphic.engine import MemoryEngine
from arms.neuromorphic.records import Tier
from arms.neuromorphic.retrieval import hot_search
from arms.neuromorphic.rollback import replay
from tests.arms.test_engine_support import HashEmbedder, ScriptedExtractor, draft, engine, tick

MOVES = {
    1: [draft("Ann residence", "Ann lives in Paris", Tier.CORE)],
    2: [draft("Ann hobby", "Ann paints watercolours")],
    4: [draft("Ann residence", "Ann moved to Berlin", Tier.CORE)],
}


def run(mem: MemoryEngine, until: int) -> None:
    while mem.turn < until:
        mem.process_exchange(tick(mem.turn + 1))


def recalled(mem: MemoryEngine, query: str) -> list[str]:
    return [r.fact.fact_content for r in mem.recall(query)]


def test_override_hides_old_fact_while_history_and_rollback_keep_it(tmp_path: Path) -> None:
    mem = engine(tmp_path, ScriptedExtractor(MOVES))
    run(mem, 5)
    found = recalled(mem, "where does Ann live Paris Berlin")
    assert "Ann moved to Berlin" in found and "Ann lives in Paris" not in found
    history = mem.history("ann residence")
    assert [f.fact_content for f in history] == ["Ann lives in Paris", "Ann moved to Berlin"]
    assert history[0].invalid_reason == "superseded" and history[0].invalid_at == 4
    assert history[0].invalid_date == "8 May 2023" and history[1].invalid_at is None
    mem.rollback(3)
    assert mem.turn == 3
    found = recalled(mem, "where does Ann live Paris Berlin")
    assert "Ann lives in Paris" in found and "Ann moved to Berlin" not in found
    assert [f.fact_content for f in mem.history("ann residence")] == ["Ann lives in Paris"]
    mem.close()


def test_rollback_survives_reopening_and_the_archive_keeps_everything(tmp_path: Path) -> None:
    mem = engine(tmp_path, ScriptedExtractor(MOVES))
    run(mem, 5)
    mem.rollback(2)
    mem.close()
    again = engine(tmp_path, ScriptedExtractor())
    assert again.turn == 2 and again.loaded_from == "lancedb"
    assert recalled(again, "Ann live Paris") == ["Ann lives in Paris", "Ann paints watercolours"]
    kinds = [e.kind for e in again.archive.events()]
    assert kinds.count("insert") == 3 and kinds[-1] == "rollback"  # nothing deleted
    again.close()


def test_the_archive_refuses_updates_and_deletes(tmp_path: Path) -> None:
    mem = engine(tmp_path, ScriptedExtractor(MOVES))
    run(mem, 2)
    mem.close()
    conn = sqlite3.connect(tmp_path / "archive.sqlite")
    for sql in ("UPDATE facts SET fact_content = 'x'", "DELETE FROM events"):
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            conn.execute(sql)
    conn.close()


def test_scoping_isolates_two_agents_and_two_conversations(tmp_path: Path) -> None:
    scopes = {
        ("ann-bot", "c1"): "Ann keeps bees",
        ("bob-bot", "c1"): "Bob keeps goats",
        ("ann-bot", "c2"): "Ann keeps ducks",
    }
    for (agent, conv), fact in scopes.items():
        script = {1: [draft(fact.split()[0] + " animals", fact)]}
        mem = engine(tmp_path, ScriptedExtractor(script), agent_id=agent, conversation_id=conv)
        run(mem, 1)
        mem.close()
    for (agent, conv), fact in scopes.items():
        mem = engine(tmp_path, ScriptedExtractor(), agent_id=agent, conversation_id=conv)
        assert recalled(mem, "who keeps bees goats ducks animals") == [fact]
        assert len(mem.state.index) == 1 and mem.turn == 1
        mem.close()


def _state(mem: MemoryEngine) -> dict[str, Any]:
    return {
        "ws": mem.state.ws.snapshot(),
        "superseded": mem.state.index.superseded,
        "facts": sorted(mem.state.index.facts),
        "turn": mem.turn,
        "counters": dict(mem.counters),
    }


def test_reopening_restores_the_same_state(tmp_path: Path) -> None:
    tiers = (Tier.ACTIVE, Tier.ACTIVE, Tier.CORE)  # CoreAnchor (Tier 0) must load as core
    script = {
        t: [draft(f"Ann thing {t % 4}", f"Ann fact number {t}", tiers[t % 3])] for t in range(1, 30)
    }
    cfg = NeuromorphicConfig(flush_every=7)  # retrieval and LTP during ingest on
    mem = MemoryEngine(tmp_path, HashEmbedder(), cfg, extractor=ScriptedExtractor(script))
    run(mem, 29)
    mem.flush()
    before, answer = _state(mem), recalled(mem, "Ann fact number 3")
    mem.close()
    again = MemoryEngine(tmp_path, HashEmbedder(), cfg, extractor=ScriptedExtractor())
    assert again.loaded_from == "lancedb"
    assert _state(again) == before and recalled(again, "Ann fact number 3") == answer
    rebuilt = replay(again.archive.events(), again.archive.facts(), HashEmbedder.dim)
    assert rebuilt.ws.snapshot() == before["ws"]  # LanceDB copy == archive replay
    again.close()


def test_a_crash_loses_only_the_exchanges_since_the_last_flush(tmp_path: Path) -> None:
    script = {t: [draft(f"Ann thing {t % 3}", f"Ann fact {t}")] for t in range(1, 30)}
    cfg = NeuromorphicConfig(flush_every=10)
    crashed = MemoryEngine(tmp_path / "a", HashEmbedder(), cfg, extractor=ScriptedExtractor(script))
    run(crashed, 25)
    crashed.abort()  # as if the process died: turns 21–25 were never committed
    reopened = MemoryEngine(tmp_path / "a", HashEmbedder(), cfg, extractor=ScriptedExtractor())
    clean = MemoryEngine(tmp_path / "b", HashEmbedder(), cfg, extractor=ScriptedExtractor(script))
    run(clean, 20)
    assert reopened.turn == 20 and _state(reopened) == _state(clean)
    reopened.close()
    clean.close()


def test_hot_search_matches_lancedb_cosine_search(tmp_path: Path) -> None:
    script = {t: [draft(f"e{t}", f"word{t} word{t + 1} shared")] for t in range(1, 15)}
    mem = engine(tmp_path, ScriptedExtractor(script))
    run(mem, 14)
    mem.flush()
    qvec = HashEmbedder().embed(["word3 word4 shared"])[0]
    ours = [(mem.state.ws.ids[r], s) for r, s in hot_search(mem.state.ws, qvec, 5)]
    theirs = mem.hot.search(*mem.scope, qvec, 5)
    assert [i for i, _ in ours] == [i for i, _ in theirs]
    assert [s for _, s in ours] == pytest.approx([s for _, s in theirs], abs=1e-5)
    mem.close()


def test_uri_with_a_scheme_is_passed_to_lancedb_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import lancedb

    seen: list[str] = []
    real_connect = lancedb.connect

    def connect(uri: str, **kw: Any) -> Any:
        seen.append(uri)
        return real_connect("memory://test" if uri.startswith("s3://") else uri, **kw)

    monkeypatch.setattr(lancedb, "connect", connect)
    mem = engine(tmp_path, ScriptedExtractor(MOVES), hot_uri="s3://bucket/memory/hot")
    run(mem, 2)
    mem.close()
    assert seen == ["s3://bucket/memory/hot"]
    assert not (tmp_path / "hot.lance").exists()


def test_reading_a_store_never_writes_to_it(tmp_path: Path) -> None:
    mem = engine(tmp_path, ScriptedExtractor(MOVES))
    run(mem, 5)
    mem.close()
    reader = engine(tmp_path, ScriptedExtractor())
    seq, versions, meta = reader.archive.last_seq(), reader.hot.versions(), reader.archive.meta()
    reader.recall("where does Ann live")
    reader.render(reader.recall("Ann hobby"), "What is Ann's hobby?")
    reader.close()
    check = engine(tmp_path, ScriptedExtractor())
    assert (check.archive.last_seq(), check.hot.versions(), check.archive.meta()) == (
        seq,
        versions,
        meta,
    )
    check.close()


def _hot_ids(mem: MemoryEngine) -> list[int]:
    return list(mem.hot.load(*mem.scope)[0].ids)


def test_records_deleted_between_flushes_stay_deleted_after_reopening(tmp_path: Path) -> None:
    script = {
        1: [draft("Ann mood", "Ann feels tired", Tier.EPHEMERAL)],
        2: [draft("Ann hobby", "Ann paints watercolours")],
    }
    cfg = NeuromorphicConfig(retrieve_during_ingest=False, flush_every=3, hot_sync_every=1)
    mem = MemoryEngine(tmp_path / "a", HashEmbedder(), cfg, extractor=ScriptedExtractor(script))
    run(mem, 3)  # flushed: the ephemeral record is in LanceDB
    assert _hot_ids(mem) == [1, 2] and mem.counters["pruned_deleted"] == 0
    run(mem, 9)  # pruned (deleted from the hot set) and flushed again
    assert mem.counters["pruned_deleted"] == 1 and _hot_ids(mem) == [2]
    before, answer = _state(mem), recalled(mem, "Ann tired")
    mem.close()
    again = MemoryEngine(tmp_path / "a", HashEmbedder(), cfg, extractor=ScriptedExtractor())
    assert again.loaded_from == "lancedb" and _state(again) == before
    rebuilt = replay(again.archive.events(), again.archive.facts(), HashEmbedder.dim)
    assert rebuilt.ws.snapshot() == before["ws"]
    assert recalled(again, "Ann tired") == answer
    again.extractor = ScriptedExtractor({1: [draft("Ann pet", "Ann adopts a tired cat")]})
    clean = MemoryEngine(tmp_path / "b", HashEmbedder(), cfg, extractor=ScriptedExtractor(script))
    run(clean, 9)
    clean.extractor = ScriptedExtractor({1: [draft("Ann pet", "Ann adopts a tired cat")]})
    run(again, 12)
    run(clean, 12)
    assert _state(again) == _state(clean)
    assert recalled(again, "Ann tired") == recalled(clean, "Ann tired")
    again.close()
    clean.close()


def test_stores_sharing_one_hot_table_keep_their_own_records(tmp_path: Path) -> None:
    hot = str(tmp_path / "shared.lance")
    facts = {"c1": "Ann keeps bees", "c2": "Bob keeps goats"}
    for cid, fact in facts.items():
        script = {1: [draft(fact.split()[0] + " pet", fact)], 2: [draft("x", f"{cid} second")]}
        mem = engine(tmp_path / cid, ScriptedExtractor(script), conversation_id=cid, hot_uri=hot)
        run(mem, 2)
        mem.close()
    for cid, fact in facts.items():
        mem = engine(tmp_path / cid, ScriptedExtractor(), conversation_id=cid, hot_uri=hot)
        assert mem.loaded_from == "lancedb" and _hot_ids(mem) == [1, 2]
        rebuilt = replay(mem.archive.events(), mem.archive.facts(), HashEmbedder.dim)
        assert mem.state.ws.snapshot() == rebuilt.ws.snapshot()
        found = recalled(mem, "who keeps bees goats pet")
        assert [f for f in found if "keeps" in f] == [fact]
        mem.close()


STATE_COUNTERS = (
    "exchanges",
    "facts",
    "superseded",
    "pruned_deleted",
    "pruned_archived",
    "reinforced",
    "elevated",
    "links_dropped",
)


def _busy_script() -> dict[int, list[Any]]:
    """Facts that get superseded, pruned (deleted and archived), reinforced and relinked."""
    script: dict[int, list[Any]] = {}
    for t in range(1, 25):
        script[t] = [
            draft(f"Ann thing {t % 3}", f"Ann fact {t}", related_entities=("Ghost", "Ann")),
            draft(f"Ann mood {t}", f"Ann feels tired {t}", Tier.EPHEMERAL),
            draft(f"Ann chore {t}", f"Ann did chore {t}"),
        ]
    return script


def test_rollback_recounts_the_state_counters(tmp_path: Path) -> None:
    cfg = NeuromorphicConfig(lambda_active=0.4, flush_every=5, elevate_k=2)
    mem = MemoryEngine(
        tmp_path / "a", HashEmbedder(), cfg, extractor=ScriptedExtractor(_busy_script())
    )
    run(mem, 24)
    assert all(mem.counters[c] > 0 for c in STATE_COUNTERS), mem.counters
    mem.rollback(12)
    clean = MemoryEngine(
        tmp_path / "b", HashEmbedder(), cfg, extractor=ScriptedExtractor(_busy_script())
    )
    run(clean, 12)
    clean.flush()
    expected = {c: clean.counters[c] for c in STATE_COUNTERS}
    assert {c: mem.counters[c] for c in STATE_COUNTERS} == expected
    mem.close()
    again = MemoryEngine(tmp_path / "a", HashEmbedder(), cfg, extractor=ScriptedExtractor())
    assert {c: again.counters[c] for c in STATE_COUNTERS} == expected
    assert again.stats()["facts"] == len(again.state.index) == 36
    again.close()
    clean.close()
