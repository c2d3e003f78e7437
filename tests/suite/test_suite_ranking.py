"""Suites rank through an arm's optional `rank_sources`, else through `retrieve`."""

from __future__ import annotations

from typing import Any

from bench.run.phases import PREDICTED_MS
from bench.suite.ranking import rank, ranker
from bench.types import Context, ContextItem, Conversation, Question

QUESTION = Question("q1", "c1", "Where?", 1, "Paris", ("D1:2",))
ITEMS = (ContextItem("a", 1.0, ("D1:2", "D1:1")), ContextItem("b", 0.5, ("D1:1", "D1:3")))


class RetrieveOnly:
    """A user-added arm: only the `bench.arm.Arm` methods."""

    name = "plain"

    def __init__(self, meta: dict[str, Any] | None = None) -> None:
        self.calls: list[str] = []
        self.meta = meta or {}

    def fingerprint(self) -> dict[str, Any]:
        return {}

    def ingest(self, conversation: Conversation) -> dict[str, Any]:
        return {}

    def retrieve(self, question: Question) -> Context:
        self.calls.append("retrieve")
        return Context(text="a\nb", items=ITEMS, meta=self.meta, write_path="capture")

    def close(self) -> None:
        pass


class Ranks(RetrieveOnly):
    """An arm that also ranks without rendering."""

    def rank_sources(self, question: Question) -> tuple[str, ...]:
        self.calls.append("rank_sources")
        return ("D1:2", "D1:1", "D1:3")


def test_an_arm_without_rank_sources_is_asked_through_retrieve() -> None:
    arm = RetrieveOnly()
    got = rank(arm, QUESTION)
    assert ranker(arm) is None and arm.calls == ["retrieve"]
    assert got.ranked == ("D1:2", "D1:1", "D1:3") and got.ms >= 0.0
    assert got.context is not None and got.context.write_path == "capture"


def test_a_stored_retrieval_keeps_its_own_time() -> None:
    assert rank(RetrieveOnly({PREDICTED_MS: 12.5}), QUESTION).ms == 12.5


def test_rank_sources_is_used_when_offered_and_gives_the_same_ranking() -> None:
    arm = Ranks()
    got = rank(arm, QUESTION)
    assert arm.calls == ["rank_sources"] and got.context is None
    assert got.ranked == tuple(RetrieveOnly().retrieve(QUESTION).ranked_source_ids())
