"""Ranked-retrieval metrics: hand-worked cases, then agreement with pytrec_eval."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from bench.suite import metrics as m
from bench.suite.trec import read_run
from bench.suite.validate import load_suite
from tests.support.e2e_support import ROOT, run_cli

SMOKE = ROOT / "datasets/fixtures/suites/smoke.json"
CUTOFFS = [1, 3, 5, 10]


def test_hand_worked_ranking() -> None:
    ranked = ["x", "a", "y", "b"]
    rel = {"a": 2, "b": 1}
    assert m.recall_at(ranked, rel, 2) == 0.5
    assert m.precision_at(ranked, rel, 2) == 0.5
    assert m.precision_at(ranked, rel, 10) == 0.2  # divides by K, not by the list length
    assert m.mrr_at(ranked, rel, 1) == 0.0 and m.mrr_at(ranked, rel, 4) == 0.5
    dcg = 2 / math.log2(3) + 1 / math.log2(5)
    idcg = 2 / math.log2(2) + 1 / math.log2(3)
    assert m.ndcg_at(ranked, rel, 4) == pytest.approx(dcg / idcg, abs=1e-12)
    assert m.hit_at(ranked, rel, 1) == 0.0 and m.hit_at(ranked, rel, 2) == 1.0
    assert m.forbidden_hit_at(ranked, ["y"], 2) == 0.0
    assert m.forbidden_hit_at(ranked, ["y"], 3) == 1.0
    assert m.forbidden_hit_at(ranked, [], 3) is None


def test_abstention_queries_have_no_retrieval_score() -> None:
    assert m.recall_at(["a"], {}, 10) is None and m.ndcg_at(["a"], {}, 10) is None
    assert m.mean([None, 1.0, 0.0]) == 0.5 and m.mean([None]) is None


def test_latency_summary_matches_numpy_percentile() -> None:
    import numpy as np

    ms = [5.0, 1.0, 9.0, 3.0, 7.0, 2.0]
    summary = m.latency_summary(ms)
    assert summary["p95"] == pytest.approx(float(np.percentile(ms, 95)))
    assert summary["avg"] == pytest.approx(4.5) and summary["max"] == 9.0


@pytest.fixture(scope="module")
def suite_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("suite") / "run"
    cutoffs = ",".join(map(str, CUTOFFS))
    proc = run_cli(
        f"suite.path={SMOKE}",
        "arms=[raw,rag,neuromorphic]",
        f"suite.cutoffs=[{cutoffs}]",
        f"out={out}",
        "progress=false",
        module="bench.suite",
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return out


@pytest.mark.parametrize("arm", ["raw", "rag", "neuromorphic"])
def test_report_matches_pytrec_eval_on_the_written_run_files(suite_run: Path, arm: str) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    suite = load_suite(SMOKE)
    qrels = {q.query_id: dict(q.relevance) for q in suite.queries if q.relevance}
    run = read_run(suite_run / "runs" / f"{arm}.trec")
    report = json.loads((suite_run / "report.json").read_text())["arms"][arm]
    assert set(qrels) <= set(run)  # every scored query has a ranked list
    for k in CUTOFFS:
        truncated = {q: dict(sorted(d.items(), key=lambda kv: -kv[1])[:k]) for q, d in run.items()}
        measures = {f"P.{k}", f"recall.{k}", f"ndcg_cut.{k}", "recip_rank"}
        per_query = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(truncated)
        ours = report["retrieval"]["byK"][str(k)]
        for name, key in (
            ("precision", f"P_{k}"),
            ("recall", f"recall_{k}"),
            ("ndcg", f"ndcg_cut_{k}"),
            ("mrr", "recip_rank"),
        ):
            theirs = sum(v[key] for v in per_query.values()) / len(per_query)
            assert ours[name] == pytest.approx(theirs, abs=1e-9), (arm, k, name)


def test_outputs_have_the_documented_shape(suite_run: Path) -> None:
    report = json.loads((suite_run / "report.json").read_text())
    rag = report["arms"]["rag"]
    assert set(rag["retrieval"]["byK"]["10"]) == {"recall", "precision", "mrr", "ndcg", "hit"}
    assert set(rag["safety"]["forbiddenHitRateAtK"]) == {str(k) for k in CUTOFFS}
    assert set(rag["latency"]) >= {"avg", "p95", "max"}
    card = json.loads((suite_run / "comparable" / "rag.json").read_text())
    assert card["metadata"]["top_k_cutoffs"] == CUTOFFS and card["metadata"]["arm"] == "rag"
    assert set(card["metrics_by_cutoff"]) == {f"top_{k}" for k in CUTOFFS}
    q1 = next(e for e in card["evaluations"] if e["query_id"] == "q1")
    assert set(q1["relevant_ranks"]) == {"m8"}
    # A stale memory ranked anywhere in the list is reported as a forbidden hit.
    assert q1["forbidden_hits"] == (
        ["m1"] if "m1" in read_run(suite_run / "runs/rag.trec")["q1"] else []
    )
    assert "## Top 10" in (suite_run / "SUMMARY.md").read_text()


def test_rerun_reuses_the_stores_and_gives_the_same_ranking(suite_run: Path) -> None:
    before = (suite_run / "runs" / "rag.trec").read_text()
    cutoffs = ",".join(map(str, CUTOFFS))
    proc = run_cli(
        f"suite.path={SMOKE}",
        "arms=[rag]",
        f"suite.cutoffs=[{cutoffs}]",
        f"out={suite_run}",
        "progress=false",
        module="bench.suite",
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "'reused_store': True" in proc.stdout + proc.stderr
    assert (suite_run / "runs" / "rag.trec").read_text() == before


@pytest.mark.slow
def test_sweep_gives_each_job_a_directory_and_shares_one_ingestion(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    proc = run_cli(
        "-m",
        f"suite.path={SMOKE}",
        "arms=[rag]",
        "arm_options.rag.top_k=1,2,3",
        "arm_options.rag.order=score,time",
        f"out={out}",
        "progress=false",
        module="bench.suite",
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    jobs = sorted(p.name for p in out.iterdir() if (p / "report.json").is_file())
    assert jobs == [
        f"arm_options.rag.order={o},arm_options.rag.top_k={k},arms=_rag_"  # shell-safe names
        for o in ("score", "time")
        for k in (1, 2, 3)
    ]  # six configurations, one ingestion:
    log = proc.stdout + proc.stderr
    assert log.count("'reused_store': False") == 1 and log.count("'reused_store': True") == 5
    assert len(list((out / "stores" / "rag").iterdir())) == 1
    text = (out / "sweep.md").read_text()
    table = text.split("\n\n")[1].splitlines()  # the recall table, one line per job
    assert sorted(line.split(" | ")[0] for line in table[2:]) == [f"| {j}" for j in jobs]
    hits = text.split("## hit@10\n\n", 1)[1].splitlines()[2:8]  # paired on query id
    assert sorted(line.split(" | ")[0] for line in hits) == [f"| {j}" for j in jobs]
    baseline = [line for line in hits if "(baseline)" in line]
    assert len(baseline) == 1 and baseline[0] == hits[0]  # the first job in sweep order
    recall = [json.loads((out / j / "report.json").read_text())["arms"]["rag"] for j in jobs]
    at10 = [r["retrieval"]["byK"]["10"]["recall"] for r in recall]
    assert at10[:3] == sorted(at10[:3]) and at10[3:] == at10[:3]  # order never changes ranks


def test_offline_answerer_per_cutoff_is_labelled_and_consistent(tmp_path: Path) -> None:
    out = tmp_path / "answers"
    proc = run_cli(
        f"suite.path={SMOKE}",
        "arms=[rag]",
        "suite.answer=true",
        "suite.cutoffs=[3,10]",
        f"out={out}",
        "progress=false",
        module="bench.suite",
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads((out / "report.json").read_text())
    assert set(report["arms"]["rag"]["answer"]) == {"3", "10"}
    card = json.loads((out / "comparable" / "rag.json").read_text())
    assert card["metadata"]["answerer_model"] == "offline-extractive"
    correct = [e["correct"] for e in card["evaluations"]]  # answers at the deepest cutoff
    assert all(isinstance(c, bool) for c in correct)
    overall = card["metrics_by_cutoff"]["top_10"]["overall"]["accuracy"]
    assert overall == pytest.approx(100 * sum(correct) / len(correct))
    assert "Answers at each cutoff (offline answerer)" in (out / "SUMMARY.md").read_text()
