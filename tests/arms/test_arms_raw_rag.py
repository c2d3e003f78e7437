"""raw and rag arms: rendering, windows, exact cosine ranking, checkpoints."""

from __future__ import annotations

import numpy as np
import pytest

from arms.rag import RagArm, RagConfig, make_chunks, rrf_fuse
from arms.raw import RawArm, RawConfig, render_transcript
from bench.arm import ArmServices
from bench.tokens import TokenCounter
from bench.types import Conversation, Question, Session, Turn


class HashEmbedder:
    """A tiny deterministic embedder: bag of hashed words, unit length."""

    model = "test/hash-64"
    dim = 64

    def __init__(self) -> None:
        self.calls = 0

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                out[row, sum(map(ord, word)) % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return np.divide(out, norms, out=np.zeros_like(out), where=norms > 0)


def conversation(n_sessions: int = 3, turns_per: int = 3) -> Conversation:
    sessions = []
    for s in range(1, n_sessions + 1):
        turns = tuple(
            Turn(
                "Ann" if t % 2 == 0 else "Bob",
                f"session {s} turn {t} topic{s}x{t}",
                f"D{s}:{t + 1}",
                s,
            )
            for t in range(turns_per)
        )
        sessions.append(Session(s, f"10:00 am on {s} May, 2023", turns))
    return Conversation("c1", ("Ann", "Bob"), tuple(sessions))


def services(tmp_path, embedder=None, budget: int = 120_000) -> ArmServices:
    return ArmServices(
        embedder=embedder or HashEmbedder(),
        tokens=TokenCounter(),
        store_dir=tmp_path,
        run_dir=tmp_path,
        max_context_tokens=budget,
    )


def question(text: str) -> Question:
    return Question("c1:0", "c1", text, 4, "x")


def test_raw_renders_every_session_with_its_header() -> None:
    text = render_transcript(conversation())
    assert text.splitlines()[0] == "[Session 1 — 10:00 am on 1 May, 2023]"
    assert text.count("[Session") == 3 and text.count("\n") == 3 * 4 - 1


def test_raw_keeps_the_most_recent_part_when_over_budget(tmp_path) -> None:
    arm = RawArm("raw", RawConfig(), services(tmp_path, budget=20))
    stats = arm.ingest(conversation())
    ctx = arm.retrieve(question("anything"))
    assert stats["truncated"] and ctx.truncated
    assert ctx.text.endswith("topic3x2") and "session 1" not in ctx.text
    assert TokenCounter().count(ctx.text) <= 20


def test_windows_overlap_by_stride_and_reach_the_end() -> None:
    chunks = make_chunks(conversation(3, 3), window=4, stride=2)
    firsts = [c.dia_ids[0] for c in chunks]
    # 9 turns, starts 0, 2, 4, then a last window moved back to end on the final turn
    assert firsts == ["D1:1", "D1:3", "D2:2", "D2:3"]
    assert chunks[-1].dia_ids[-1] == "D3:3"
    assert all(len(c.dia_ids) == 4 for c in chunks[:-1])


def test_a_window_crossing_sessions_gets_a_header_per_session() -> None:
    chunk = make_chunks(conversation(3, 3), window=4, stride=2)[1]  # D1:3 .. D2:3
    assert chunk.text.count("[Session") == 2
    assert chunk.text.splitlines()[0].startswith("[Session 1 ")


def test_rag_ranking_equals_lancedb_cosine_search(tmp_path) -> None:
    import lancedb

    arm = RagArm("rag", RagConfig(top_k=5), services(tmp_path))
    conv = conversation(4, 4)
    arm.ingest(conv)
    got = [i for i, _ in arm._dense_ranking("topic3x1 session 3")]
    table = lancedb.connect(str(tmp_path / "c1" / "lancedb")).open_table("chunks")
    vector = arm.services.embedder.embed(["topic3x1 session 3"])[0]
    rows = table.search(vector).distance_type("cosine").limit(5).to_list()  # type: ignore[attr-defined]
    assert got == [r["chunk_id"] for r in rows]


def test_rag_store_is_reused_when_complete_and_rebuilt_when_params_change(tmp_path) -> None:
    embedder = HashEmbedder()
    conv = conversation()
    first = RagArm("rag", RagConfig(), services(tmp_path, embedder)).ingest(conv)
    calls = embedder.calls
    again = RagArm("rag", RagConfig(), services(tmp_path, embedder)).ingest(conv)
    assert not first["reused_store"] and again["reused_store"] and embedder.calls == calls
    retrieval_only = RagConfig(top_k=3, order="time", hybrid_bm25=True)
    swept = RagArm("rag", retrieval_only, services(tmp_path, embedder)).ingest(conv)
    assert swept["reused_store"] and embedder.calls == calls  # a top_k sweep re-embeds nothing
    changed = RagArm("rag", RagConfig(window=2), services(tmp_path, embedder)).ingest(conv)
    assert not changed["reused_store"] and embedder.calls == calls + 1
    other_text = conversation(4)  # same id, different turns: never reuse the old vectors
    assert not RagArm("rag", RagConfig(), services(tmp_path, embedder)).ingest(other_text)[
        "reused_store"
    ]


def test_rag_context_lists_source_turns_and_retrieve_is_read_only(tmp_path) -> None:
    arm = RagArm("rag", RagConfig(top_k=2), services(tmp_path))
    arm.ingest(conversation())
    first = arm.retrieve(question("topic2x1"))
    second = arm.retrieve(question("topic2x1"))
    assert first == second and len(first.items) == 2
    assert "D2:2" in first.items[0].source_ids


def test_hybrid_bm25_fuses_both_rankings(tmp_path) -> None:
    arm = RagArm("rag", RagConfig(top_k=3, hybrid_bm25=True), services(tmp_path))
    arm.ingest(conversation())
    assert len(arm.retrieve(question("topic2x1")).items) == 3


def test_rrf_on_a_hand_worked_example() -> None:
    # doc 1: 1/(60+1) + 1/(60+2); doc 2: 1/(60+2) + 1/(60+1); doc 3: 1/(60+3)
    fused = rrf_fuse([[(1, 0.9), (2, 0.8), (3, 0.1)], [(2, 5.0), (1, 4.0)]], k=60)
    assert [d for d, _ in fused] == [1, 2, 3]  # ties broken by id
    assert fused[0][1] == pytest.approx(1 / 61 + 1 / 62)
    assert fused[2][1] == pytest.approx(1 / 63)


def test_retrieve_before_ingest_is_an_error(tmp_path) -> None:
    with pytest.raises(RuntimeError, match="before ingest"):
        RagArm("rag", RagConfig(), services(tmp_path)).retrieve(question("x"))


def test_a_reused_store_ranks_exactly_as_the_fresh_lancedb_read(tmp_path) -> None:
    conv = conversation(6, 5)
    queries = [f"topic{s}x{t} session {s}" for s in range(1, 7) for t in range(5)]
    fresh = RagArm("rag", RagConfig(top_k=20), services(tmp_path))
    assert not fresh.ingest(conv)["reused_store"]  # ranks vectors read back from LanceDB
    expected = [fresh._dense_ranking(q) for q in queries]
    reused = RagArm("rag", RagConfig(top_k=20), services(tmp_path))
    assert reused.ingest(conv)["reused_store"]  # ranks the saved vectors.npz
    assert [reused._dense_ranking(q) for q in queries] == expected
    assert reused._vectors.dtype == fresh._vectors.dtype == np.float32

    (tmp_path / "c1" / "vectors.npz").unlink()  # a store without it is rebuilt, not trusted
    healed = RagArm("rag", RagConfig(top_k=20), services(tmp_path))
    assert not healed.ingest(conv)["reused_store"]
    assert [healed._dense_ranking(q) for q in queries] == expected


@pytest.mark.parametrize("budget", [1, 5, 9, 10, 11, 12, 25, 40, 61, 100, 10_000])
def test_raw_tail_equals_truncating_the_whole_transcript(tmp_path, budget: int) -> None:
    """The tail read from the end is the whole transcript's left truncation, cut and ids."""
    conv = conversation(5, 4)
    counter = TokenCounter()
    full = render_transcript(conv)
    want, cut = counter.truncate_left(full, budget)
    arm = RawArm("raw", RawConfig(), services(tmp_path, budget=budget))
    arm.ingest(conv)
    ctx = arm.retrieve(question("anything"))
    assert (ctx.text, ctx.truncated) == (want, cut)
    start = len(full) - len(want)
    lines, position, ids = full.split("\n"), 0, []
    turn_ids = iter(t.dia_id for t in conv.turns())
    for line in lines:
        if not line.startswith("[Session"):
            dia_id = next(turn_ids)
            if position >= start:
                ids.append(dia_id)
        position += len(line) + 1
    assert ctx.unranked_source_ids == tuple(reversed(ids))


def test_raw_renders_only_the_tail_of_a_long_conversation(tmp_path) -> None:
    """A turn far before the budget's reach is never rendered (here: it cannot be)."""

    class Unrenderable(Turn):
        def render(self) -> str:
            raise AssertionError("the raw arm rendered a turn outside its budget")

    conv = conversation(40, 4)
    first = conv.sessions[0]
    early = Unrenderable(first.turns[0].speaker, "x", first.turns[0].dia_id, 1)
    sessions = (Session(1, first.date_time, (early, *first.turns[1:])), *conv.sessions[1:])
    arm = RawArm("raw", RawConfig(), services(tmp_path, budget=50))
    arm.ingest(Conversation("c1", conv.speakers, sessions))
    assert arm.retrieve(question("anything")).truncated


@pytest.mark.slow
def test_rag_holds_no_chunk_texts_after_ingest(tmp_path) -> None:
    """A conversation's chunk texts (twice its transcript) are rendered when read, not kept."""
    import tracemalloc

    turns = tuple(Turn("Ann", f"{i} " + "word " * 1000, f"D1:{i}", 1) for i in range(200))
    conv = Conversation("c1", ("Ann",), (Session(1, "10:00 am on 1 May, 2023", turns),))
    RagArm("rag", RagConfig(), services(tmp_path / "warm")).ingest(conversation())  # imports
    arm = RagArm("rag", RagConfig(), services(tmp_path))
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        arm.ingest(conv)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    transcript = sum(len(t.text) for t in turns)  # ~1 MB; chunk texts held: ~2 MB
    assert held < transcript / 4
    top = arm.retrieve(question("199 word"))
    assert top.items and all(it.text.startswith("[Session 1") for it in top.items)
