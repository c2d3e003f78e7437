"""Ranked source ids: items' ids deduplicated in rank order; raw lists what it kept."""

from __future__ import annotations

from arms.rag import RagArm, RagConfig
from arms.raw import RawArm, RawConfig
from bench.types import Context, ContextItem
from tests.arms.test_arms_raw_rag import HashEmbedder, conversation, question, services


def test_items_are_deduplicated_in_rank_order() -> None:
    items = (ContextItem("a", 0.9, ("D1:2", "D1:3")), ContextItem("b", 0.5, ("D1:3", "D2:1")))
    assert Context("x", items).ranked_source_ids() == ["D1:2", "D1:3", "D2:1"]


def test_raw_lists_only_the_turns_its_truncated_context_holds(tmp_path) -> None:  # type: ignore[no-untyped-def]
    arm = RawArm("raw", RawConfig(), services(tmp_path, budget=20))
    arm.ingest(conversation())
    ctx = arm.retrieve(question("anything"))
    kept = ctx.ranked_source_ids()
    assert kept[0] == "D3:3"  # most recent first
    turns = {t.dia_id: t.text for t in conversation().turns()}
    assert kept and all(turns[i] in ctx.text for i in kept)
    dropped = [i for i in turns if i not in kept]
    assert dropped and all(turns[i] not in ctx.text for i in dropped[:-1])
    assert ctx.items == ()  # run records of raw keep no retrieved ids


def test_raw_untruncated_lists_every_turn(tmp_path) -> None:  # type: ignore[no-untyped-def]
    arm = RawArm("raw", RawConfig(), services(tmp_path))
    arm.ingest(conversation())
    ids = arm.retrieve(question("anything")).ranked_source_ids()
    assert ids == [t.dia_id for t in reversed(conversation().turns())]


def test_rag_windows_map_back_to_their_turns(tmp_path) -> None:  # type: ignore[no-untyped-def]
    arm = RagArm("rag", RagConfig(window=2, stride=1, top_k=3), services(tmp_path, HashEmbedder()))
    arm.ingest(conversation())
    ctx = arm.retrieve(question("topic2x1"))
    ranked = ctx.ranked_source_ids()
    assert len(ranked) == len(set(ranked)) and ranked[:2] == list(ctx.items[0].source_ids)
