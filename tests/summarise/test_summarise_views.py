"""Equivalence (TOST), cost per correct answer and judge-run groups, against independent
computations (scipy / numpy) and hand-made records."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from bench.records import OK, ArmResult, Judgement, QuestionRecord
from bench.summarise.cost import cost_view
from bench.summarise.equivalence import equivalence_rows, tost
from bench.summarise.judge_runs import judge_runs_view
from bench.summarise.model import PairedTest, PairRow
from bench.types import Usage


@pytest.mark.parametrize(("a_only", "b_only", "n"), [(30, 40, 1000), (5, 3, 300), (120, 80, 1540)])
def test_tost_matches_the_normal_formula(a_only: int, b_only: int, n: int) -> None:
    d = (b_only - a_only) / n
    se = np.sqrt(((a_only + b_only) / n - d * d) / n)
    for margin in (0.01, 0.02, 0.05):
        expected = max(norm.sf((d + margin) / se), norm.sf((margin - d) / se))
        got_d, p, got_se = tost(a_only, b_only, n, margin)
        assert (got_d, got_se) == pytest.approx((d, se))
        assert p == pytest.approx(expected, rel=1e-9, abs=1e-15)
        lo, hi = d - norm.ppf(0.95) * se, d + norm.ppf(0.95) * se
        row = PairRow("A", "B", "scored", PairedTest(n, a_only, b_only, 0, 0, 1.0, None), {})
        (eq,) = equivalence_rows([row], margin, ("scored",))
        assert eq.equivalent is bool(-margin < lo and hi < margin)  # TOST = 90% CI inside ±δ


def test_tost_without_discordant_pairs_makes_no_claim() -> None:
    row = PairRow("A", "B", "scored", PairedTest(500, 0, 0, 250, 250, 1.0, None), {})
    (eq,) = equivalence_rows([row], 0.02, ("scored",))
    assert (eq.p, eq.equivalent, eq.note) == (None, False, "no discordant pairs")


def test_cost_per_correct_and_its_paired_interval_match_numpy() -> None:
    rng = np.random.default_rng(7)
    n = 400
    t_a, t_b = rng.integers(100, 5000, n), rng.integers(10, 800, n)
    c_a, c_b = rng.random(n) < 0.6, rng.random(n) < 0.4
    seen = {
        "a": [(i, int(t_a[i]), {}, bool(c_a[i])) for i in range(n)],
        "b": [(i, int(t_b[i]), {}, bool(c_b[i])) for i in range(n)],
    }
    view = cost_view(seen, None)  # type: ignore[arg-type]
    assert view is not None and view.measure == "context tokens"
    ra, rb = t_a.sum() / c_a.sum(), t_b.sum() / c_b.sum()
    ua = (t_a - ra * c_a) / c_a.mean()
    ub = (t_b - rb * c_b) / c_b.mean()
    z = 1.959963984540054
    arm_a = view.arms[0]
    assert arm_a.value == pytest.approx(ra)
    half = z * ua.std(ddof=1) / np.sqrt(n)
    assert arm_a.ci == pytest.approx((ra - half, ra + half))
    (pair,) = view.pairs
    half = z * (ua - ub).std(ddof=1) / np.sqrt(n)
    assert pair.value == pytest.approx(ra - rb)
    assert pair.ci == pytest.approx((ra - rb - half, ra - rb + half))


def test_cost_uses_usage_and_prices_when_present() -> None:
    from bench.runmeta import RunMeta

    usage = Usage(prompt_tokens=1000, completion_tokens=10)
    seen = {"a": [(0, 5, usage, True), (1, 5, usage, False), (2, 5, usage, True)]}
    prices = {"provider": {"answerer": {"price_prompt_per_1k": 0.5, "price_completion_per_1k": 2}}}
    view = cost_view(seen, RunMeta(config=prices))  # type: ignore[arg-type]
    assert view is not None and view.measure.startswith("answering tokens")
    tokens, money = view.arms
    assert tokens.value == pytest.approx(3 * 1010 / 2)
    assert money.unit == "money" and money.value == pytest.approx(3 * (0.5 + 0.02) / 2)


def _record(qid: str, category: int, verdicts: list[bool]) -> QuestionRecord:
    judgements = {
        f"j#{k}": Judgement(f"j#{k}", OK, v, model="m") for k, v in enumerate(verdicts, 1)
    }
    result = ArmResult(status=OK, answer="x", correct=None, judgements=judgements)
    return QuestionRecord(qid, "d", "c", category, "?", "g", [], {"arm": result})


def test_judge_runs_by_hand() -> None:
    records = [
        _record("c:0", 1, [True, True]),
        _record("c:1", 1, [True, False]),  # a tie is no majority
        _record("c:2", 2, [False, False]),
        _record("c:3", 5, [True, True]),  # not scored
    ]
    group_of = {"c:0": "1", "c:1": "1", "c:2": "2", "c:3": "5"}
    (view,) = judge_runs_view(records, ["arm"], group_of, ["1", "2"])
    assert (view.base, view.runs) == ("j", ["j#1", "j#2"])
    assert view.overall.n == 3
    assert view.overall.per_run == pytest.approx([2 / 3, 1 / 3])
    assert view.overall.mean == pytest.approx(0.5)
    assert view.overall.sd == pytest.approx(np.std([2 / 3, 1 / 3]))  # population SD
    assert view.overall.majority == pytest.approx(1 / 3)
    assert view.groups["1"].per_run == pytest.approx([1.0, 0.5])
