"""Fusion, spreading activation, recall, rendering, hydration and the answer-type gate."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from arms.neuromorphic.answer_gate import answer_type, gate_note
from arms.neuromorphic.archive import query_terms
from arms.neuromorphic.config import NeuromorphicConfig
from arms.neuromorphic.exchange import Exchange
from arms.neuromorphic.fusion import concatenate, one_per_entity, rrf
from arms.neuromorphic.hydration import best_sentence
from arms.neuromorphic.records import FactRow, Recalled, Tier
from arms.neuromorphic.retrieval import _found_by, interleave
from arms.neuromorphic.spreading import spread
from arms.neuromorphic.workingset import WorkingSet
from bench.types import Turn
from tests.arms.test_engine_support import ScriptedExtractor, draft, engine, tick


def test_rrf_hand_worked_example() -> None:
    # hot = [a, b, c], graph = [c, a], cold = [d]; k = 60
    # a: 1/61 + 1/62 = .032522   c: 1/63 + 1/61 = .032266   d: 1/61 = .016393   b: 1/62 = .016129
    fused = rrf([["a", "b", "c"], ["c", "a"], ["d"]], k=60)  # type: ignore[list-item]
    assert [item for item, _ in fused] == ["a", "c", "d", "b"]
    assert [round(s, 6) for _, s in fused] == [0.032522, 0.032266, 0.016393, 0.016129]


def test_rrf_ties_keep_first_seen_order_and_concatenate_dedupes() -> None:
    assert [i for i, _ in rrf([[1, 2], [2, 1]], k=60)] == [1, 2]
    assert concatenate([[3, 1], [1, 2], [4]]) == [(3, 1.0), (1, 0.5), (2, 1 / 3), (4, 0.25)]


def test_one_record_per_entity_hot_beats_archive() -> None:
    fused = [(10, 0.9), (11, 0.8), (12, 0.7), (13, 0.6)]
    entity = {10: "paris", 11: "berlin", 12: "paris", 13: "rome"}
    hot = {11, 12, 13}
    kept = one_per_entity(fused, entity.__getitem__, hot.__contains__, limit=2)
    assert kept == [(12, 0.9), (11, 0.8)]  # 12 is hot and takes its entity's best score


def _chain_ws() -> WorkingSet:
    """a → b → c → d linked in a chain; e unlinked."""
    ws = WorkingSet(dim=4)
    names = ["a", "b", "c", "d", "e"]
    for i, name in enumerate(names):
        related = (names[i + 1],) if name in "abc" else ()
        vec = np.eye(4, dtype=np.float32)[i % 4]
        ws.add(FactRow(i + 1, 1, name, f"fact {name}", Tier.ACTIVE, related, "d", (), vec), 1)
    return ws


def test_spreading_activation_follows_links_up_to_max_hops() -> None:
    ws = _chain_ws()
    w = np.array([1.0, 0.5, 1.0, 1.0, 1.0])
    got = spread(ws, w, [(0, 0.8)], [], max_hops=2, cap=10, factor=0.5)
    # b = 0.8 · 0.5 · w_b(0.5) = 0.2;  c = 0.2 · 0.5 · w_c(1) = 0.1;  d is 3 hops away
    assert got == [(1, pytest.approx(0.2)), (2, pytest.approx(0.1))]
    assert 3 not in dict(spread(ws, w, [(0, 0.8)], [], max_hops=2, cap=10, factor=0.5))
    assert 3 in dict(spread(ws, w, [(0, 0.8)], [], max_hops=3, cap=10, factor=0.5))


def test_spreading_activation_is_capped_and_skips_invalid_rows() -> None:
    ws = _chain_ws()
    w = np.ones(5)
    assert len(spread(ws, w, [(1, 1.0)], [], max_hops=2, cap=1, factor=0.5)) == 1
    ws.invalidate([2], 2, "superseded", None)
    got = dict(spread(ws, w, [(1, 1.0)], [], max_hops=2, cap=10, factor=0.5))
    assert 2 not in got and got == {0: 0.5}  # b ← a (reverse link) only; c is invalid


def test_cold_hits_expand_one_hop() -> None:
    ws = _chain_ws()
    cold = FactRow(99, 1, "z", "old fact", Tier.ACTIVE, ("d",), "d", (), np.zeros(4))
    got = spread(ws, np.ones(5), [], [(cold, 0.6)], max_hops=2, cap=10, factor=0.5)
    assert got == [(3, pytest.approx(0.3))]


def test_recall_fuses_hot_cold_and_graph(tmp_path: Path) -> None:
    script = {
        1: [
            draft("Ann trip", "Ann visited Kyoto temples", related_entities=("Ann camera",)),
            draft("Ann camera", "Ann bought a film camera"),
        ],
        2: [draft("Ann mood", "Ann feels sleepy", Tier.EPHEMERAL)],
    }
    cfg = NeuromorphicConfig(retrieve_during_ingest=False, top_k=1)
    mem = engine(tmp_path, ScriptedExtractor(script), cfg)
    for t in range(1, 12):
        mem.process_exchange(tick(t))
    found = {r.fact.fact_content: r.found_by for r in mem.recall("Kyoto temples")}
    assert "hot" in found["Ann visited Kyoto temples"]
    assert "cold" in found["Ann visited Kyoto temples"]  # FTS keyword hit in the archive
    assert "graph" in found["Ann bought a film camera"]  # linked from the hot hit
    assert found["Ann feels sleepy"] == ("cold",)  # pruned from hot, still in the archive
    mem.close()


def test_recall_reads_without_changing_state(tmp_path: Path) -> None:
    mem = engine(tmp_path, ScriptedExtractor({1: [draft("Ann trip", "Ann visited Kyoto")]}))
    mem.process_exchange(tick(1))
    before = mem.state.ws.snapshot()
    mem.recall("Kyoto")
    assert mem.state.ws.snapshot() == before
    mem.recall("Kyoto", reinforce=True)
    assert mem.state.ws.snapshot() != before
    mem.close()


def test_switches_turn_mechanisms_off(tmp_path: Path) -> None:
    script = {
        1: [
            draft("Ann trip", "Ann visited Kyoto", related_entities=("Ann cam",)),
            draft("Ann cam", "Ann owns a camera"),
        ]
    }
    cfg = NeuromorphicConfig(retrieve_during_ingest=False, cold_search=False, spreading=False)
    mem = engine(tmp_path, ScriptedExtractor(script), cfg)
    mem.process_exchange(tick(1))
    assert {b for r in mem.recall("Kyoto") for b in r.found_by} == {"hot"}
    mem.close()


def test_render_shows_validity_as_session_dates_and_hydrates(tmp_path: Path) -> None:
    turns = (
        Turn("Ann", "Hello there. I went to Kyoto yesterday. It rained.", "D1:1", 1),
        Turn("Bob", "Nice! Did you see temples?", "D1:2", 1),
    )
    kyoto = draft(
        "Ann trip", "Ann went to Kyoto on 7 May 2023", source_ids=("D1:1",), valid_date="7 May 2023"
    )  # the resolved date belongs to the text only
    script = {
        1: [kyoto, draft("Ann rain", "It rained in Kyoto", source_ids=("D1:1",))],
        2: [draft("Ann home", "Ann lives in Osaka")],
        3: [draft("Ann home", "Ann lives in Nara", valid_date="1 June 2023")],
    }
    cfg = NeuromorphicConfig(retrieve_during_ingest=False, hydrate_full_k=1)
    mem = engine(tmp_path, ScriptedExtractor(script), cfg)
    mem.process_exchange(Exchange(1, "1:56 pm on 8 May, 2023", turns))
    recalled = mem.recall("When did Ann go to Kyoto?")
    text = mem.render(recalled, "When did Ann go to Kyoto?")
    lines = text.splitlines()
    assert lines[0] == "<FACTS>" and "</FACTS>" in lines
    assert "- Ann went to Kyoto on 7 May 2023 (valid 8 May 2023 – present)" in lines
    hydrated = [line for line in lines if line.startswith("  > ")]
    assert hydrated == [
        "  > (8 May 2023) Ann: Hello there. I went to Kyoto yesterday. It rained."
    ]  # the source turn is shown once, whole, under the best fact
    assert lines[-1].startswith("<ANSWER_TYPE>The question asks for a date.")
    mem.process_exchange(tick(2, session=2, date="9:00 am on 20 May, 2023"))
    mem.process_exchange(tick(3, session=3, date="9:00 am on 3 June, 2023"))
    old, new = mem.history("Ann home")
    block = mem.render([Recalled(old, 1.0, ("cold",)), Recalled(new, 0.5, ("hot",))])
    assert block.splitlines()[1:3] == [
        "- Ann lives in Osaka (valid 20 May 2023 – 3 June 2023)",
        "- Ann lives in Nara (valid 3 June 2023 – present)",
    ]  # session dates of the turns that made and overrode them, not "1 June 2023"
    mem.close()


def test_best_sentence_prefers_the_query_then_the_fact() -> None:
    turn = "Ann: Hello there. I went to Kyoto yesterday. It rained all day."
    assert best_sentence(turn, "When was Ann in Kyoto?") == "Ann: I went to Kyoto yesterday."
    assert best_sentence(turn, "weather", "It rained") == "Ann: It rained all day."


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("Which state does Ann live in?", "state"),
        ("How old is Bob?", "age"),
        ("What year did Ann move?", "year"),
        ("How many cats does Ann have?", "number"),
        ("When did Ann go to Kyoto?", "date"),
        ("What does Ann like?", None),
    ],
)
def test_answer_type_gate(question: str, kind: str | None) -> None:
    found = answer_type(question)
    assert (found[0] if found else None) == kind
    note = gate_note(question)
    assert (note is None) == (kind is None)
    if kind == "state":
        assert note and "town or city" in note


def test_hot_scores_gathered_from_the_archive_equal_their_own_pass() -> None:
    """`gather_scores` is bitwise `cosine_scores` for any subset and order of rows,
    across block boundaries and whatever the kernel tails of either matrix."""
    from arms.neuromorphic.vectors import cosine_scores, gather_scores

    rng = np.random.default_rng(3)
    for total in (1, 3, 4, 7, 1023, 1025, 1030, 2051, 2600):  # ends of blocks and groups
        archive = rng.standard_normal((total + 5, 32)).astype(np.float32)
        qvec = rng.standard_normal(32).astype(np.float32)
        full = cosine_scores(archive, total, qvec)
        for size in {1, 2, 5, total // 2, total}:
            pos = np.sort(rng.choice(total, size=min(max(size, 1), total), replace=False))
            pos = pos if size % 2 else rng.permutation(pos)
            hot = np.zeros((len(pos) + 3, 32), dtype=np.float32)
            hot[: len(pos)] = archive[pos]
            want = cosine_scores(hot, len(pos), qvec)
            got = gather_scores(full, pos.astype(np.int64), hot, len(pos), qvec)
            assert got.tobytes() == want.tobytes(), (total, size)


def test_archive_cosines_equal_one_dot_product_per_fact() -> None:
    """`ArchiveIndex.cosines` is bitwise `float(vector @ qvec)` per fact, in the given order."""
    from arms.neuromorphic.archive_index import ArchiveIndex

    rng = np.random.default_rng(11)
    for dim in (3, 32, 256, 301):
        index = ArchiveIndex(dim)
        vectors = rng.standard_normal((150, dim)).astype(np.float32)
        for i, vec in enumerate(vectors):
            index.add_fact(FactRow(i + 1, 1, f"e{i}", "x", Tier.ACTIVE, (), "d", (), vec))
        qvec = rng.standard_normal(dim).astype(np.float32)
        for size in (0, 1, 5, 20, 150):
            fids = [int(f) for f in rng.choice(np.arange(1, 151), size=size, replace=False)]
            want = [float(vectors[f - 1] @ qvec) for f in fids]
            got = index.cosines(fids, qvec)
            assert [x.hex() for x in got] == [x.hex() for x in want]
            assert all(type(x) is float for x in got)


def test_dense_search_equals_the_masked_top_k_of_every_fact() -> None:
    """Superseded facts set to −inf by position give the mask-select's hits bit for bit."""
    from arms.neuromorphic.archive_index import ArchiveIndex
    from bench.arm.topk import top_k

    rng = np.random.default_rng(12)
    index = ArchiveIndex(16)
    vectors = rng.standard_normal((300, 16)).astype(np.float32)
    vectors[50:60] = vectors[40]  # exact ties, broken by fact id
    for i, vec in enumerate(vectors):
        index.add_fact(FactRow(i + 1, 1, f"e{i}", "x", Tier.ACTIVE, (), "d", (), vec))
    superseded = np.zeros(300, dtype=bool)
    qvec = rng.standard_normal(16).astype(np.float32)
    for batch in ([], [41, 3], list(range(100, 230)), [52, 41, 7], list(range(1, 301))):
        index.supersede(batch, 2)
        superseded[[f - 1 for f in batch]] = True
        full = index.scores(qvec)
        kept = full.copy()
        for k in (1, 10, 200, 400):
            masked = np.where(superseded, -np.inf, full)
            top = top_k(masked, min(k, 300), keys=np.arange(1, 301))
            want = [(int(i) + 1, float(masked[i])) for i in top if np.isfinite(masked[i])]
            assert index.dense_search(qvec, k, full) == want
            assert index.dense_search(qvec, k) == want
        assert full.tobytes() == kept.tobytes()  # the caller's scores are not changed


def test_spreading_ties_break_by_record_id() -> None:
    ws = _chain_ws()  # a → b → c → d; from b, a (reverse link) and c tie at 0.5
    got = spread(ws, np.ones(5), [(1, 1.0)], [], max_hops=1, cap=10, factor=0.5)
    assert got == [(0, 0.5), (2, 0.5)]
    assert spread(ws, np.ones(5), [(1, 1.0)], [], max_hops=1, cap=1, factor=0.5) == [(0, 0.5)]


def test_cold_hits_interleave_keyword_and_dense_once_each_up_to_the_limit() -> None:
    assert interleave([1, 2, 3], [2, 4], 10) == [1, 2, 4, 3]
    assert interleave([1, 2, 3], [2, 4], 3) == [1, 2, 4]
    assert interleave([], [5, 5, 6], 2) == [5, 6]
    assert interleave([1], [2], 0) == []


def test_query_terms_are_distinct_lower_case_non_stopwords_in_order() -> None:
    got = query_terms("Where did Alice go? alice moved to Berlin in 2023, a x city")
    assert got == ["alice", "moved", "berlin", "2023", "city"]


def test_found_by_names_each_list_once_in_list_order() -> None:
    named = {"hot": [1, 2], "graph": [2, 2, 4], "cold": [3, 1]}
    assert _found_by(named) == {
        1: ("hot", "cold"),
        2: ("hot", "graph"),
        4: ("graph",),
        3: ("cold",),
    }
