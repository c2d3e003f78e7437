"""Retrieval vs reader misses and turn/session recall on bench.run records."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.scoring.miss import (
    classify_miss,
    miss_counts,
    miss_table,
    session_recall,
    turn_recall,
)
from tests.support.e2e_support import load_records, run_cli


def test_classification_rules() -> None:
    assert classify_miss(["D1:2"], ["D1:3", "D1:2"], False) == "reader"
    assert classify_miss(["D1:2"], ["D1:3"], False) == "retrieval"
    assert classify_miss(["D1:2"], ["D1:3"], True) is None
    assert classify_miss([], ["D1:3"], False) is None  # no evidence: cannot tell
    assert classify_miss(["D1:2"], [], False) is None  # whole-context arm: nothing listed


def test_turn_and_session_recall() -> None:
    evidence = ["D1:2", "D3:5"]
    retrieved = ["D3:1", "D1:2", "D9:9"]
    assert turn_recall(evidence, retrieved, 1) == 0.0
    assert turn_recall(evidence, retrieved, 3) == 0.5
    assert session_recall(evidence, retrieved, 1) == 0.5  # D3:1 shares session D3
    assert session_recall(evidence, retrieved, 2) == 1.0
    assert session_recall(["abc_1:4"], ["abc_1:9"], 5) == 1.0  # LongMemEval ids


def test_counts_on_a_real_smoke_run(smoke_raw_rag_run: Path) -> None:
    import json

    out = smoke_raw_rag_run  # dataset=smoke arms=[raw,rag] (tests/conftest.py)
    records = list(load_records(out).values())
    # every ok result stores its miss kind; rag's agrees with its listed retrieved ids
    for record in records:
        for arm, result in record["arms"].items():
            found = result.get("evidence_retrieved")
            assert (found is None) == (not record["evidence"]), (arm, record["question_id"])
            if result["correct"] is False and found is not None:
                assert result["miss"] == ("reader" if found else "retrieval")
            else:
                assert result.get("miss") is None
        rag = record["arms"]["rag"]
        if len(rag["retrieved_ids"]) < 50:  # the stored list is capped at 50 ids
            expected = classify_miss(record["evidence"], rag["retrieved_ids"], rag["correct"])
            assert rag.get("miss") == expected
    counts = miss_counts(records)
    expected = {"retrieval": 0, "reader": 0}
    for record in records:
        for result in record["arms"].values():
            if result.get("miss"):
                expected[result["miss"]] += 1
    got = {k: sum(c[k] for cs in counts.values() for c in cs.values()) for k in expected}
    assert got == expected and sum(got.values()) > 0
    assert miss_table(records)[0].startswith("| arm | category |")
    # the summariser (stdlib only) shows the same counts per arm and category
    summary = run_cli(str(out), "--json", module="bench.summarise")
    assert summary.returncode == 0, summary.stderr[-2000:]
    assert json.loads(summary.stdout)["misses"] == counts
    assert "raw" in counts  # raw's kept turns classify its misses too

    # records written before the stored field: counted from retrieved_ids instead
    for path in (out / "questions").glob("*.json"):
        record = json.loads(path.read_text())
        for result in record["arms"].values():
            result.pop("miss", None)
            result.pop("evidence_retrieved", None)
        path.write_text(json.dumps(record))
    old_records = list(load_records(out).values())
    assert all("miss" not in r for rec in old_records for r in rec["arms"].values())
    counts = miss_counts(old_records)
    assert "raw" not in counts  # old raw records list no retrieved ids: not classified
    summary = run_cli(str(out), "--json", module="bench.summarise")
    assert summary.returncode == 0, summary.stderr[-2000:]
    assert json.loads(summary.stdout)["misses"] == counts


def test_record_without_miss_fields_reads_with_defaults() -> None:
    from bench.records import ArmResult, QuestionRecord

    base = {"schema_version": 1, "question_id": "q", "dataset": "d", "conversation_id": "c"}
    body = {**base, "category": 1, "question": "?", "gold": "a", "evidence": ["D1:1"]}
    old = QuestionRecord.from_json({**body, "arms": {"rag": {"status": "ok", "correct": False}}})
    assert old.arms["rag"].miss is None and old.arms["rag"].evidence_retrieved is None
    new = ArmResult(status="ok", correct=False, evidence_retrieved=True, miss="reader")
    again = QuestionRecord.from_json(
        QuestionRecord(**{**body, "arms": {"rag": new}}).to_json()  # type: ignore[arg-type]
    )
    assert again.arms["rag"] == new


def test_screen_reports_session_recall_at_least_turn_recall(tmp_path: Path) -> None:
    import json

    out = tmp_path / "screen"
    proc = run_cli(
        "dataset=smoke", "arms=[rag]", f"out={out}", "progress=false", module="bench.screen"
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    (path,) = (out / "screens").glob("rag-*.json")
    result = json.loads(path.read_text())
    rows = [r for r in result["rows"] if r["evidence_recall"] is not None]
    assert rows and result["session_recall"] is not None
    # a retrieved evidence turn also retrieves its session
    assert all(r["session_recall"] >= r["evidence_recall"] for r in rows)


@pytest.mark.slow
def test_raw_miss_survives_predict_then_evaluate(tmp_path: Path) -> None:
    from tests.support.e2e_support import strip_timings

    common = ("dataset=smoke", "arms=[raw]", "limit.conversations=1", "progress=false")
    whole, split = tmp_path / "all", tmp_path / "split"
    assert run_cli(*common, f"out={whole}").returncode == 0
    for phase in ("predict", "evaluate"):
        done = run_cli(*common, f"out={split}", f"phase={phase}")
        assert done.returncode == 0, done.stderr[-2000:]
    a, b = load_records(whole), load_records(split)
    assert a.keys() == b.keys()
    assert any(r["arms"]["raw"].get("evidence_retrieved") is not None for r in a.values())
    assert all(strip_timings(a[q]) == strip_timings(b[q]) for q in a)
