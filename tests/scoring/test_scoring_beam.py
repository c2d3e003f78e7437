"""BEAM scoring arithmetic: rubric aggregation both ways, alignment, Kendall tau-b, offline."""

from __future__ import annotations

import math

import pytest

from bench.scoring.beam import (
    align,
    event_order_score,
    judge_question,
    offline_scores,
    reply_items,
    rubric_scores,
)
from bench.types import Question


def _q(ability: str, rubric: tuple[str, ...]) -> Question:
    return Question("b:1", "b", "q?", 3, "gold", question_type=ability, rubric=rubric)


def test_rubric_half_points_cast_upstream_kept_beside() -> None:
    """Upstream casts 0.5 to 0 with int() except for event ordering; `kept` never does."""
    assert rubric_scores("summarization", [1.0, 0.5, 0.0, 0.5]).upstream == 0.25
    assert rubric_scores("summarization", [1.0, 0.5, 0.0, 0.5]).kept == 0.5
    eo = rubric_scores("event_ordering", [1.0, 0.5])
    assert (eo.upstream, eo.kept, eo.items) == (0.75, 0.75, 2)
    with pytest.raises(ValueError):
        rubric_scores("abstention", [])


def test_align_first_unused_match_wins() -> None:
    """Each reference item is used at most once; unmatched lines stay as they are."""
    same = lambda r, s: r.lower() == s.lower()  # noqa: E731
    assert align(["a", "b"], ["A", "A", "B", "c"], same) == ["a", "A", "b", "c"]
    assert reply_items("one\n\ntwo") == ["one", "", "two"]  # blank lines count, as upstream


def test_kendall_tau_b_hand_computed() -> None:
    """Swapped pair: τ = 1/3; a missing item ties at len(union)+1 (τ_b corrects for it)."""
    s = event_order_score(["a", "b", "c"], ["a", "c", "b"])
    assert (s.precision, s.recall, s.f1) == (1.0, 1.0, 1.0)
    assert s.tau_b == pytest.approx(1 / 3) and s.final == pytest.approx(2 / 3)
    # union a b c x; ranks ref 1 2 3 5, sys 2 1 5 3: 4 concordant, 2 discordant
    s = event_order_score(["a", "b", "c"], ["b", "a", "x"])
    assert s.f1 == pytest.approx(2 / 3) and s.tau_b == pytest.approx(1 / 3)
    assert s.final == pytest.approx(4 / 9)
    # ranks ref 1 2 3, sys 1 4 4: C=2, D=0, one tie in sys → 2/sqrt(3·2)
    s = event_order_score(["a", "b", "c"], ["a"])
    assert s.tau_b == pytest.approx(2 / math.sqrt(6)) and s.f1 == pytest.approx(0.5)
    assert s.final == pytest.approx((2 / math.sqrt(6) + 1) / 2 * 0.5)


def test_undefined_tau_is_none_not_nan() -> None:
    """One reference item: both rankings constant, upstream's NaN becomes None."""
    s = event_order_score(["a"], ["a"])
    assert s.f1 == 1.0 and s.tau_b is None and s.final is None
    assert event_order_score(["a", "b"], []).f1 == 0.0


class _Judge:
    """A scripted judge: fixed item scores; events equal when lower-cased texts match."""

    def __init__(self, scores: list[float]) -> None:
        self.scores = iter(scores)
        self.items: list[str] = []

    def score_item(self, rubric_item: str, response: str) -> float:
        self.items.append(rubric_item)
        return next(self.scores)

    def same_event(self, reference: str, system: str) -> bool:
        return reference.lower() == system.strip().lower()


def test_judge_question_scores_each_item_once() -> None:
    """The hook is called once per rubric item, in order; event order on the reply lines."""
    judge = _Judge([1.0, 0.5, 1.0])
    q = _q("event_ordering", ("Basil", "Mint", "Rosemary"))
    out = judge_question(q, "mint\nbasil\nrosemary", judge)
    assert judge.items == ["Basil", "Mint", "Rosemary"]
    assert out["rubric"] == out["rubric_kept"] == pytest.approx(2.5 / 3)
    assert out["event_order_f1"] == 1.0
    assert out["event_order_tau_b"] == pytest.approx(1 / 3, abs=1e-4)
    other = judge_question(_q("knowledge_update", ("x", "y")), "r", _Judge([1.0, 0.5]))
    assert (other["rubric"], other["rubric_kept"]) == (0.5, 0.75)
    assert "event_order_f1" not in other


def test_offline_rubric_reach_and_event_order() -> None:
    """Rubric reach drops upstream's lead-in; non-BEAM questions get nothing."""
    q = _q("knowledge_update", ("LLM response should state: every 3 days", "mentions the basil"))
    out = offline_scores(q, "every 3 days", "I water it every 3 days now.")
    assert out == {"rubric_reach_offline": 0.5}
    eo = offline_scores(_q("event_ordering", ("Basil", "Mint")), "Mint first\nthen basil", "")
    assert eo["event_order_f1_offline"] == 1.0 and eo["event_order_tau_b_offline"] == -1.0
    assert eo["event_order_score_offline"] == 0.0
    assert offline_scores(Question("l:1", "l", "q", 1, "g"), "a", "ctx") == {}


def test_offline_rubric_reach_memoises_lines_not_whole_contexts() -> None:
    """Every question's context (a different top k of the same turns) used to stay in
    `content_terms`' memo whole; its lines recur, so the memo now stops growing."""
    from bench.text import content_terms

    pool = [f"Ann: on day {i} I planted zucchini{i} beside the shed" for i in range(60)]
    q = _q("knowledge_update", ("LLM response should state: zucchini3", "mentions tomatoes"))
    sizes = []
    for n in range(40):  # 40 questions, 40 different contexts of the same 60 lines
        context = "\n".join(pool[(n * 7 + k) % 60] for k in range(10 + n % 5))
        assert offline_scores(q, "zucchini3", context)["rubric_reach_offline"] in (0.0, 0.5)
        sizes.append(content_terms.cache_info().currsize)
    assert sizes[-1] == sizes[20]  # every line seen by then: nothing new is kept
