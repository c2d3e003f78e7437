"""The summariser's statistics on hand-built runs (records written with bench.records)."""

from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest
from scipy.stats import binomtest
from statsmodels.stats.inter_rater import cohens_kappa

from bench.files import write_json_atomic
from bench.records import ArmResult, Judgement, QuestionRecord, write_record
from bench.summarise import summarise_run
from bench.summarise.render_json import summary_to_json
from bench.summarise.stats import holm, wilson_interval

CATEGORIES = [1, 1, 2, 4, 4, 4, 5, 5]


def arm(
    correct: bool | None,
    f1: float,
    answer: str = "x",
    *,
    latency: float = 100.0,
    tokens: int = 10,
    outcome: str = "f1>=0.5",
    **scores: Any,
) -> ArmResult:
    """An ok result with its scores (abstained defaults to the answer saying so)."""
    scores = {"f1": f1, "abstained": answer == "not mentioned", **scores}
    return ArmResult(
        status="ok",
        answer=answer,
        correct=correct,
        scores=scores,
        latency_ms=latency,
        context_tokens=tokens,
        outcome=outcome,
    )


def record(
    qid: str,
    category: int,
    arms: dict[str, ArmResult],
    *,
    question: str = "Q?",
    question_type: str | None = None,
    dataset: str = "locomo",
) -> QuestionRecord:
    """A question record; category 5 gets no gold and a trap."""
    return QuestionRecord(
        question_id=qid,
        dataset=dataset,
        conversation_id=qid.split(":")[0],
        category=category,
        question=question,
        gold=None if category == 5 else "gold",
        evidence=[],
        arms=arms,
        adversarial_answer="Yes" if category == 5 else None,
        question_type=question_type,
    )


def write_run(run_dir: Path, records: list[QuestionRecord], meta: dict | None = None) -> Path:
    """Write records (file stems from the ids) and an optional run.json."""
    for rec in records:
        write_record(run_dir, rec.question_id.replace(":", "_"), rec)
    if meta is not None:
        write_json_atomic(run_dir / "run.json", meta)
    return run_dir


def small_run(run_dir: Path) -> Path:
    """Eight LoCoMo questions, two arms, one rag error (worked out in the tests below).

    raw correct: T F T T F F | T F     rag correct: T T F T T err | F T
    """
    raw_ok = [True, False, True, True, False, False, True, False]
    raw_f1 = [1.0, 0.2, 0.8, 1.0, 0.0, 0.4, 1.0, 0.0]
    raw_ans = ["x", "x", "x", "x", "not mentioned", "x", "not mentioned", "Yes"]
    rag_ok = [True, True, False, True, True, None, False, True]
    rag_f1 = [1.0, 0.6, 0.3, 1.0, 0.9, 0.0, 0.0, 1.0]
    rag_ans = ["x", "x", "x", "x", "x", "x", "No", "not mentioned"]
    records = []
    for i, cat in enumerate(CATEGORIES):
        trap = {"trap_hit": raw_ans[i] == "Yes"} if cat == 5 else {}
        arms = {"raw": arm(raw_ok[i], raw_f1[i], raw_ans[i], latency=100.0 * (i + 1), **trap)}
        if rag_ok[i] is None:
            arms["rag"] = ArmResult.failed("answerer timed out\ntraceback ...")
        else:
            trap = {"trap_hit": rag_ans[i] == "Yes"} if cat == 5 else {}
            arms["rag"] = arm(rag_ok[i], rag_f1[i], rag_ans[i], tokens=20 + i, **trap)
        records.append(record(f"conv-1:{i}", cat, arms))
    return write_run(run_dir, records)


def test_per_arm_accuracy_f1_and_exclusions(tmp_path: Path) -> None:
    s = summarise_run(small_run(tmp_path))
    raw, rag = s.arms["raw"], s.arms["rag"]
    assert (raw.accuracy["scored"].k, raw.accuracy["scored"].n) == (3, 6)
    assert (raw.accuracy["all"].k, raw.accuracy["all"].n) == (4, 8)
    assert (rag.accuracy["scored"].k, rag.accuracy["scored"].n) == (4, 5)  # error excluded
    assert (rag.accuracy["all"].k, rag.accuracy["all"].n) == (5, 7)
    assert rag.excluded["scored"] == {"error": 1} and raw.excluded["all"] == {}
    assert raw.accuracy["scored"].ci == wilson_interval(3, 6)
    assert raw.f1["scored"] == pytest.approx(3.4 / 6)
    assert rag.f1["scored"] == pytest.approx(3.8 / 5)
    assert raw.groups["1"].accuracy.n == 2 and raw.groups["1"].f1 == pytest.approx(0.6)
    assert rag.groups["4"].excluded == 1 and rag.groups["4"].n_questions == 3
    assert raw.latency_ms["p50"] == pytest.approx(450.0)  # linear, 8 values 100..800
    assert raw.latency_ms["mean"] == pytest.approx(450.0)
    assert rag.context_tokens_mean == pytest.approx((20 + 21 + 22 + 23 + 24 + 26 + 27) / 7)


def test_adversarial_block_and_abstention_on_answerable(tmp_path: Path) -> None:
    s = summarise_run(small_run(tmp_path))
    raw, rag = s.arms["raw"], s.arms["rag"]
    abstained = raw.adversarial_abstention
    assert abstained is not None and (abstained.k, abstained.n) == (1, 2)
    assert raw.trap_hits and (raw.trap_hits.k, raw.trap_hits.n) == (1, 2)
    assert rag.trap_hits and rag.trap_hits.k == 0
    # raw abstained on one of six answerable questions; rag on none of its five ok ones
    assert (raw.abstention_answerable.k, raw.abstention_answerable.n) == (1, 6)
    assert (rag.abstention_answerable.k, rag.abstention_answerable.n) == (0, 5)
    assert raw.stale is None


def test_pairs_count_discordant_on_both_sets(tmp_path: Path) -> None:
    s = summarise_run(small_run(tmp_path))
    rows = {row.set: row for row in s.pairs}
    scored, every = rows["scored"].pooled, rows["all"].pooled
    # scored, rag's error dropped: both {0,3}, raw only {2}, rag only {1,4}
    assert (scored.n, scored.both, scored.a_only, scored.b_only, scored.neither) == (5, 2, 1, 2, 0)
    # all adds q6 (raw only) and q7 (rag only)
    assert (every.n, every.a_only, every.b_only) == (7, 2, 3)
    assert every.p == pytest.approx(binomtest(2, 5).pvalue)
    assert set(rows["scored"].groups) == {"1", "2", "4"}
    assert set(rows["all"].groups) == {"1", "2", "4", "5"}
    assert rows["scored"].groups["1"] is rows["all"].groups["1"]  # shared: Holm counts it once
    assert scored.underpowered and every.mde is None


def test_holm_is_over_every_distinct_test(tmp_path: Path) -> None:
    run = small_run(tmp_path)
    s = summarise_run(run)
    family: dict[int, Any] = {}
    for row in s.pairs:
        for test in (row.pooled, *row.groups.values()):
            family[id(test)] = test
    tests = list(family.values())
    assert len(tests) == 2 + 4  # two pooled sets + categories 1, 2, 4, 5
    assert [t.p_holm for t in tests] == pytest.approx(holm([t.p for t in tests]))


def test_json_contract_of_interfaces_md(tmp_path: Path) -> None:
    out = summary_to_json(summarise_run(small_run(tmp_path)))
    assert out["outcome"] == "f1>=0.5"
    rag = out["arms"]["rag"]
    for key in ("n_all", "n_scored", "acc_all", "acc_scored", "f1_scored", "context_tokens_mean"):
        assert key in rag
    assert {"p50", "p90", "p99"} <= set(rag["latency_ms"])
    assert {"n", "acc", "f1"} <= set(rag["by_category"]["1"])
    assert rag["n_scored"] == 5 and rag["acc_scored"] == pytest.approx(0.8) and rag["errors"] == 1
    pair = out["pairs"][0]
    assert {"a", "b", "set", "n", "a_only", "b_only", "p"} <= set(pair)
    assert (pair["a"], pair["b"], pair["set"]) == ("raw", "rag", "scored")
    assert "baseline" not in out
    json.dumps(out, allow_nan=False)  # no NaN anywhere


def test_baseline_pairs_on_question_id_never_on_text(tmp_path: Path) -> None:
    # the same question text twice (LoCoMo repeats 12 texts): pairing on text would collapse
    before = [
        record("conv-1:0", 4, {"rag": arm(True, 1.0)}, question="What did she paint?"),
        record("conv-1:1", 4, {"rag": arm(False, 0.0)}, question="What did she paint?"),
        record("conv-1:2", 2, {"rag": arm(False, 0.0)}),
        record("conv-1:3", 2, {"rag": arm(False, 0.0)}),  # absent from the new run
    ]
    after = [
        record("conv-1:0", 4, {"rag": arm(False, 0.0)}, question="What did she paint?"),
        record("conv-1:1", 4, {"rag": arm(True, 1.0)}, question="What did she paint?"),
        record("conv-1:2", 2, {"rag": arm(True, 1.0), "raw": arm(True, 1.0)}),
    ]
    base = write_run(tmp_path / "base", before)
    now = write_run(tmp_path / "now", after)
    s = summarise_run(now, baseline=base)
    assert s.baseline is not None
    scored = next(r for r in s.baseline if r.set == "scored")
    assert (scored.a, scored.pooled.n, scored.pooled.b_only, scored.pooled.a_only) == (
        "rag",
        3,
        2,  # gained: conv-1:1 and conv-1:2
        1,  # lost: conv-1:0
    )
    assert scored.groups["4"].n == 2 and scored.groups["4"].b_only == 1
    assert any("no arm raw" in n for n in s.notes)
    row = summary_to_json(s)["baseline"][0]
    assert {"arm": "rag", "set": "scored", "n": 3, "gained": 2, "lost": 1}.items() <= row.items()


def test_baseline_pairs_on_question_id_when_positions_differ(tmp_path: Path) -> None:
    """A question only the baseline has shifts its records; pairing still follows the id."""
    before = [
        record("conv-1:0", 4, {"rag": arm(False, 0.0)}),  # absent from the new run
        record("conv-1:1", 4, {"rag": arm(True, 1.0)}),
        record("conv-1:2", 4, {"rag": arm(True, 1.0)}),
    ]
    after = [
        record("conv-1:1", 4, {"rag": arm(True, 1.0)}),
        record("conv-1:2", 4, {"rag": arm(False, 0.0)}),
    ]
    s = summarise_run(
        write_run(tmp_path / "now", after), baseline=write_run(tmp_path / "base", before)
    )
    assert s.baseline is not None
    pooled = next(r for r in s.baseline if r.set == "all").pooled
    assert (pooled.n, pooled.both, pooled.a_only, pooled.b_only, pooled.neither) == (2, 1, 1, 0, 0)


def test_label_schemes(tmp_path: Path) -> None:
    run = small_run(tmp_path)
    official = summarise_run(run)
    mem0 = summarise_run(run, labels="mem0")
    assert official.group_labels["1"] == "multi-hop" and mem0.group_labels["1"] == "single-hop"
    assert official.group_labels["4"] == "single-hop" and mem0.group_labels["4"] == "open-domain"
    assert mem0.arms["raw"].groups["1"].label == "single-hop"


def test_small_n_is_a_reason_of_the_verdict(tmp_path: Path) -> None:
    s = summarise_run(small_run(tmp_path))
    assert "too-few-questions" in {r.code for r in s.verdict.reasons}
    assert any("run.json absent" in n for n in s.notes)
    big = [record(f"c:{i}", 4, {"a": arm(i % 2 == 0, 1.0)}) for i in range(300)]
    s_big = summarise_run(write_run(tmp_path / "big", big))
    assert "too-few-questions" not in {r.code for r in s_big.verdict.reasons}


def test_longmemeval_groups_by_type_and_scores_every_question(tmp_path: Path) -> None:
    types = ["temporal-reasoning", "knowledge-update", "temporal-reasoning", "multi-session"]
    recs = [
        record(
            f"q{i}" + ("_abs" if i == 3 else ""),
            5,  # an integer code that must not mean "adversarial" here
            {"a": arm(i != 1, 1.0, "not mentioned" if i in (0, 3) else "x")},
            question_type=t,
            dataset="longmemeval_s",
        )
        for i, t in enumerate(types)
    ]
    s = summarise_run(write_run(tmp_path, recs))
    assert not s.locomo_style and s.sets_identical
    assert list(s.group_labels) == ["knowledge-update", "multi-session", "temporal-reasoning"]
    a = s.arms["a"]
    assert a.accuracy["scored"].n == 4 and a.accuracy["scored"].k == 3
    assert a.adversarial_abstention is None
    # abstention rate on answerable: q0 abstained, q3 is an _abs item and not counted
    assert (a.abstention_answerable.k, a.abstention_answerable.n) == (1, 3)
    assert summary_to_json(s)["group_kind"] == "question_type"


def test_kappa_between_judges_and_the_f1_rule(tmp_path: Path) -> None:
    j1 = [True, True, False, False, True, False]
    j2 = [True, False, False, False, True, True]
    recs = []
    for i in range(6):
        res = arm(j1[i], 1.0 if i < 3 else 0.0, outcome="judge:j1")
        res.judgements = {
            "j1": Judgement("j1", "ok", j1[i]),
            "j2": Judgement("j2", "ok", j2[i]) if i != 5 else Judgement("j2", "error"),
        }
        recs.append(record(f"c:{i}", 4, {"a": res}))
    s = summarise_run(write_run(tmp_path, recs))
    assert s.outcome == "judge:j1"
    kappas = {(k.a, k.b): k for k in s.kappas}
    assert set(kappas) == {("j1", "j2"), ("j1", "f1>=0.5"), ("j2", "f1>=0.5")}

    def expected(x: list[bool], y: list[bool]) -> float:
        table = [[0, 0], [0, 0]]
        for a, b in zip(x, y, strict=True):
            table[int(a)][int(b)] += 1
        return float(cohens_kappa(table).kappa)

    rule = [True, True, True, False, False, False]
    assert kappas[("j1", "j2")].n == 5  # the errored verdict is left out
    assert kappas[("j1", "j2")].kappa == pytest.approx(expected(j1[:5], j2[:5]))
    assert kappas[("j1", "f1>=0.5")].kappa == pytest.approx(expected(j1, rule))


def test_stale_fact_rate_when_present(tmp_path: Path) -> None:
    recs = [
        record(f"c:{i}", 4, {"a": arm(True, 1.0, stale_in_context=i < 1), "b": arm(True, 1.0)})
        for i in range(4)
    ]
    s = summarise_run(write_run(tmp_path, recs))
    stale = s.arms["a"].stale
    assert stale is not None and (stale.k, stale.n) == (1, 4)
    assert s.arms["b"].stale is None


def test_arm_order_follows_run_json_and_pairs_cover_every_combination(tmp_path: Path) -> None:
    recs = [record(f"c:{i}", 4, {n: arm(True, 1.0) for n in ("c", "a", "b")}) for i in range(3)]
    meta = {"arms": ["b", "a", "c"], "outcome": "f1>=0.5", "warnings": ["judge = answerer"]}
    s = summarise_run(write_run(tmp_path, recs, meta))
    assert list(s.arms) == ["b", "a", "c"]
    pairs = {(r.a, r.b) for r in s.pairs}
    assert pairs == set(combinations(["b", "a", "c"], 2))
    assert any("judge = answerer" in n for n in s.notes)


def test_outcome_comes_from_the_records_and_a_disagreeing_run_json_is_noted(tmp_path: Path) -> None:
    run = small_run(tmp_path / "run")
    write_json_atomic(run / "run.json", {"outcome": "judge:llm", "arms": ["raw", "rag"]})
    summary = summarise_run(run)
    assert summary.outcome == "f1>=0.5"
    assert any("run.json says outcome judge:llm" in note for note in summary.notes)


def test_baseline_with_another_outcome_rule_is_flagged(tmp_path: Path) -> None:
    now = small_run(tmp_path / "now")
    before = write_run(
        tmp_path / "before",
        [record(f"conv-1:{i}", 4, {"raw": arm(True, 1.0, outcome="judge:llm")}) for i in range(8)],
    )
    summary = summarise_run(now, baseline=before)
    assert any("baseline outcome rule judge:llm differs" in note for note in summary.notes)
