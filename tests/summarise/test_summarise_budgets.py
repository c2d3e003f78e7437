"""The summary's context-budget view (pairs at each budget, headline) and coverage view."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from scipy.stats import binomtest

from bench.records import ArmResult, BudgetResult
from bench.summarise import summarise_run
from bench.summarise.budgets import headline_budget
from bench.summarise.render import render_text
from bench.summarise.render_json import summary_to_json
from bench.summarise.stats import holm, wilson_interval
from tests.summarise.test_summarise import record, write_run

BUDGETS = (256, 1024)
ARMS = ("raw", "rag", "mem")


def _result(rng: random.Random, tokens: int) -> ArmResult:
    at = [
        BudgetResult(b, "ok", "x", rng.random() < 0.3 + b / 4096, min(b, tokens), b < tokens)
        for b in BUDGETS
    ]
    return ArmResult(
        "ok", "x", rng.random() < 0.5, {"f1": 0.0}, tokens, budgets=at, outcome="f1>=0.5"
    )


def _run(tmp_path: Path, meta: dict[str, Any] | None = None) -> Path:
    rng = random.Random(5)
    sizes = {"raw": 3000, "rag": 1200, "mem": 400}
    records = [
        record(f"conv-{i % 2}:{i}", 1 + i % 4, {a: _result(rng, sizes[a]) for a in ARMS})
        for i in range(60)
    ]
    records.append(record("conv-0:99", 5, {a: _result(rng, sizes[a]) for a in ARMS}))
    return write_run(tmp_path / "run", records, meta)


def test_each_budget_pairs_every_arm_with_exact_mcnemar_and_holm_per_budget(
    tmp_path: Path,
) -> None:
    run = _run(tmp_path)
    summary = summarise_run(run)
    view = summary.budgets
    assert view is not None and view.budgets == list(BUDGETS)
    from tests.support.e2e_support import load_records

    records = [r for r in load_records(run).values() if r["category"] != 5]
    for budget in BUDGETS:
        rows = view.pairs[budget]
        assert [(r.a, r.b) for r in rows] == [("raw", "rag"), ("raw", "mem"), ("rag", "mem")]
        for row in rows:
            got = {
                a: [
                    next(b["correct"] for b in r["arms"][a]["budgets"] if b["budget"] == budget)
                    for r in records
                ]
                for a in (row.a, row.b)
            }
            a_only = sum(x and not y for x, y in zip(got[row.a], got[row.b], strict=True))
            b_only = sum(y and not x for x, y in zip(got[row.a], got[row.b], strict=True))
            assert (row.pooled.n, row.pooled.a_only, row.pooled.b_only) == (60, a_only, b_only)
            if a_only + b_only:
                assert row.pooled.p == pytest.approx(binomtest(a_only, a_only + b_only, 0.5).pvalue)
        assert [r.pooled.p_holm for r in rows] == holm([r.pooled.p for r in rows])
        for name in ARMS:
            cell = view.cells[name][budget]
            k = sum(
                next(b["correct"] for b in r["arms"][name]["budgets"] if b["budget"] == budget)
                for r in records
            )
            assert (cell.accuracy.k, cell.accuracy.n) == (k, 60)
            assert cell.accuracy.ci == wilson_interval(k, 60)


def test_headline_is_the_largest_budget_every_arm_fills() -> None:
    assert headline_budget([256, 512, 1024], {"raw": 24000.0, "mem": 1100.0}) == 1024
    assert headline_budget([256, 512, 1024], {"raw": 24000.0, "mem": 600.0}) == 512
    assert headline_budget([256, 512], {"raw": 24000.0, "mem": 100.0}) == 256


def test_text_and_json_show_the_headline_row_and_the_curve(tmp_path: Path) -> None:
    summary = summarise_run(_run(tmp_path))
    text = render_text(summary)
    assert "| arm | accuracy at equal budget 256 | context at 256 | unconstrained accuracy" in text
    assert "| arm | B = 256 | B = 1024 |" in text
    data = summary_to_json(summary)["budgets"]
    assert data["headline"] == 256 and data["budgets"] == [256, 1024]
    assert set(data["arms"]["mem"]) == {"256", "1024"} and len(data["pairs"]["1024"]) == 3


def test_a_run_without_budgets_has_no_budget_view(tmp_path: Path) -> None:
    rec = record("conv-0:0", 1, {"raw": ArmResult("ok", "x", True, {"f1": 1.0}, 10)})
    summary = summarise_run(write_run(tmp_path / "plain", [rec]))
    assert summary.budgets is None and "budgets" not in summary_to_json(summary)


def test_coverage_marks_an_arm_holding_half_the_haystack_on_most_questions(
    tmp_path: Path,
) -> None:
    meta = {"arms": list(ARMS), "conversation_tokens": {"conv-0": 4000, "conv-1": 2000}}
    summary = summarise_run(_run(tmp_path, meta))
    rows = {r.arm: r for r in summary.coverage}
    assert rows["raw"].near_full and rows["raw"].mean_share == pytest.approx((0.75 + 1) / 2)
    assert rows["rag"].half_or_more == 30 and not rows["rag"].near_full  # 1200/2000 only
    assert rows["mem"].half_or_more == 0 and not rows["mem"].near_full
    assert rows["mem"].mean_share == pytest.approx((400 / 4000 + 400 / 2000) / 2)
    coverage = summary_to_json(summary)["coverage"]
    assert coverage["raw"]["near_full_context"] is True
    assert "near full-context" in render_text(summary)


def test_coverage_of_an_older_run_reads_the_raw_arms_untruncated_context(
    tmp_path: Path,
) -> None:
    """Before run.json kept `conversation_tokens`, raw's whole transcript is the size."""
    meta = {"arms": ["raw", "rag"], "config": {"arm_options": {"raw": {"kind": "raw"}}}}
    recs = [
        record(
            f"conv-0:{i}",
            1,
            {
                "raw": ArmResult("ok", "x", True, {"f1": 1.0}, 1000),
                "rag": ArmResult("ok", "x", True, {"f1": 1.0}, 100),
            },
        )
        for i in range(3)
    ]
    rows = {r.arm: r for r in summarise_run(write_run(tmp_path / "old", recs, meta)).coverage}
    assert rows["rag"].mean_share == pytest.approx(0.1) and rows["raw"].near_full


def test_a_budget_listed_twice_counts_once(tmp_path: Path) -> None:
    twice = [BudgetResult(256, "ok", "x", True, 200), BudgetResult(256, "ok", "y", False, 200)]
    result = ArmResult("ok", "x", True, {"f1": 1.0}, 900, budgets=twice)
    rec = record("conv-0:0", 1, {"raw": result, "rag": ArmResult("ok", "x", True, {"f1": 1.0})})
    view = summarise_run(write_run(tmp_path / "twice", [rec])).budgets
    assert view is not None
    cell = view.cells["raw"][256].accuracy
    assert (cell.k, cell.n) == (1, 1)


def test_each_budget_pair_carries_the_clustered_test_over_conversations(tmp_path: Path) -> None:
    rng = random.Random(11)
    sizes = {"raw": 3000, "rag": 1200, "mem": 400}
    records = [
        record(f"conv-{i % 6}:{i}", 1 + i % 4, {a: _result(rng, sizes[a]) for a in ARMS})
        for i in range(72)
    ]
    summary = summarise_run(write_run(tmp_path / "run", records))
    view = summary.budgets
    assert view is not None
    from bench.summarise.clustered import clustered_paired

    for budget in BUDGETS:
        rows = view.pairs[budget]
        for row in rows:
            pairs = [
                (
                    rec.conversation_id,
                    next(b.correct for b in rec.arms[row.a].budgets if b.budget == budget),
                    next(b.correct for b in rec.arms[row.b].budgets if b.budget == budget),
                )
                for rec in records
            ]
            expected = clustered_paired([(c, bool(x), bool(y)) for c, x, y in pairs])
            got = row.pooled.clustered
            assert got is not None and (got.k, got.n) == (6, 72)
            assert (got.p, got.ci95, got.deff) == (expected.p, expected.ci95, expected.deff)
        clustered = [r.pooled.clustered for r in rows]
        assert [c.p_holm for c in clustered if c] == holm([c.p for c in clustered if c])
    text = render_text(summary)
    assert "| budget | A | B | n | A only | B only | p (exact) | p (Holm) | p (clustered) |" in text
    pair = summary_to_json(summary)["budgets"]["pairs"]["256"][0]
    assert (
        pair["clustered"]["k"] == 6
        and pair["clustered"]["p"] == view.pairs[256][0].pooled.clustered.p
    )  # type: ignore[union-attr]
