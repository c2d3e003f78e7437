"""Adapters read tiny real-format samples into valid suites; BEIR and the LongMemEval
subset run end to end through `python -m bench.suite`."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from bench.errors import DatasetError
from bench.suite.adapters import load_suites
from tests.support.e2e_support import ROOT, run_cli

FIX = ROOT / "datasets/fixtures"
BEIR = FIX / "suites/beir-mini"
LME_SUBSET = Path(os.environ.get("BENCH_DATA_DIR", "/nonexistent")) / "longmemeval-s-subset16.json"


def test_beir_keeps_graded_qrels_and_drops_unjudged_queries() -> None:
    (suite,) = load_suites("beir", BEIR, "test")
    assert suite.kind == "beir" and len(suite.memories) == 6
    assert [q.query_id for q in suite.queries] == ["q1", "q2", "q3"]
    assert suite.queries[0].relevance == {"d1": 2, "d2": 1}
    assert suite.queries[2].relevance == {"d6": 1}  # grade 0 is not relevant
    assert suite.memories[0].text.startswith("Photosynthesis. Plants")
    assert suite.memories[5].text.startswith("The Pacific")  # empty title left out


def test_beir_bad_qrels_line_is_named(tmp_path: Path) -> None:
    folder = tmp_path / "b"
    (folder / "qrels").mkdir(parents=True)
    for name in ("corpus.jsonl", "queries.jsonl"):
        (folder / name).write_text((BEIR / name).read_text())
    (folder / "qrels/test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\tnope\t1\n")
    with pytest.raises(DatasetError, match=r"test.tsv:2: unknown corpus id"):
        load_suites("beir", folder, "test")


def test_squad_documents_and_abstentions() -> None:
    (suite,) = load_suites("rag", FIX / "suites/squad-mini.json", "test")
    assert [m.id for m in suite.memories] == ["0-0", "0-1", "1-0"]
    by_id = {q.query_id: q for q in suite.queries}
    assert by_id["56ddde6b9a695914005b9628"].relevance == {"0-0": 1}
    assert by_id["56ddde6b9a695914005b9628"].expected_answer == "France"
    impossible = by_id["5ad39d53604f3c001a3fe8d1"]
    assert impossible.abstention and not impossible.relevance


def test_locomo_turns_are_memories_and_evidence_is_relevance() -> None:
    suites = load_suites("locomo", FIX / "smoke_locomo.json", "test")
    raw = json.loads((FIX / "smoke_locomo.json").read_text())
    assert len(suites) == len(raw)
    first = suites[0]
    turn_ids = [
        t["dia_id"]
        for k, v in raw[0]["conversation"].items()
        if k.startswith("session_") and isinstance(v, list)
        for t in v
    ]
    assert sorted(m.id for m in first.memories) == sorted(turn_ids)
    adversarial = [q for s in suites for q in s.queries if q.question_type == "adversarial"]
    assert adversarial and all(q.abstention and not q.relevance for q in adversarial)
    for query in first.queries:
        if query.question_type == "adversarial":
            assert query.abstention and not query.relevance
        else:
            assert query.relevance and set(query.relevance) <= set(turn_ids)


def test_longmemeval_has_answer_turns_and_abstention() -> None:
    suites = load_suites("longmemeval", FIX / "smoke_longmemeval.json", "test")
    raw = {i["question_id"]: i for i in json.loads((FIX / "smoke_longmemeval.json").read_text())}
    for suite in suites:
        (query,) = suite.queries
        item = raw[query.query_id]
        marked = {
            f"{sid}:{j + 1}"
            for sid, session in zip(
                item["haystack_session_ids"], item["haystack_sessions"], strict=True
            )
            for j, turn in enumerate(session)
            if turn.get("has_answer") is True
        }
        assert query.abstention == query.query_id.endswith("_abs")
        if marked:
            assert set(query.relevance) == marked
        elif not query.abstention:  # session-level evidence: every turn of the answer sessions
            assert {m.rsplit(":", 1)[0] for m in query.relevance} == set(item["answer_session_ids"])


def test_unknown_adapter_is_a_did_you_mean() -> None:
    with pytest.raises(Exception, match="did you mean 'beir'"):
        load_suites("beri", BEIR, "test")


@pytest.mark.slow
def test_beir_mini_runs_with_every_default_arm(tmp_path: Path) -> None:
    out = tmp_path / "beir"
    proc = run_cli(
        f"suite.path={BEIR}",
        "suite.adapter=beir",
        f"out={out}",
        "progress=false",
        module="bench.suite",
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    printed = proc.stdout.splitlines()  # after the log lines: the headline, then the path
    assert any(line.startswith("# Suite ") for line in printed)
    assert any(line.startswith("| arm | recall |") for line in printed)
    assert printed[-1] == str(out / "SUMMARY.md") and "## Top 20" not in proc.stdout
    report = json.loads((out / "report.json").read_text())
    assert list(report["arms"]) == ["raw", "rag", "neuromorphic", "tuned"]
    for diag in report["arms"].values():
        assert diag["scored_queries"] == 3
        # 6 documents, 5 relevant pairs: every arm's list reaches them all by K = 10,
        # and precision@10 is then 5 hits / (3 queries x 10) = 1/6
        assert diag["retrieval"]["byK"]["10"]["recall"] == 1.0
        assert diag["retrieval"]["byK"]["10"]["precision"] == pytest.approx(1 / 6)


@pytest.mark.slow
@pytest.mark.skipif(not LME_SUBSET.is_file(), reason="longmemeval-s-subset16.json not present")
def test_longmemeval_subset_runs_through_bench_suite(tmp_path: Path) -> None:
    out = tmp_path / "lme"
    proc = run_cli(
        f"suite.path={LME_SUBSET}",
        "suite.adapter=longmemeval",
        "arms=[rag]",
        f"out={out}",
        "progress=false",
        module="bench.suite",
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads((out / "report.json").read_text())
    rag = report["arms"]["rag"]
    assert report["suite"]["queries"] == 16 and rag["scored_queries"] == 16
    recalls = [rag["retrieval"]["byK"][str(k)]["recall"] for k in (10, 20, 50, 200)]
    assert recalls == sorted(recalls) and recalls[-1] > 0
    assert len((out / "runs/rag.trec").read_text().split("\n")) > 16
