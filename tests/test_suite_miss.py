"""Retrieval vs reader misses and turn/session recall on bench.run records."""

from __future__ import annotations

from pathlib import Path

from bench.suite.miss import (
    classify_miss,
    miss_counts,
    miss_table,
    session_recall,
    turn_recall,
)
from tests.e2e_support import load_records, run_cli


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


def test_counts_on_a_real_smoke_run(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = run_cli("dataset=smoke", "arms=[raw,rag]", f"out={out}", "progress=false")
    assert proc.returncode == 0, proc.stderr[-2000:]
    records = list(load_records(out).values())
    counts = miss_counts(records)
    assert "raw" not in counts  # raw lists no retrieved ids: never classified
    expected = {"retrieval": 0, "reader": 0}
    for record in records:
        rag = record["arms"]["rag"]
        if rag["correct"] is False and record["evidence"] and rag["retrieved_ids"]:
            found = set(record["evidence"]) & set(rag["retrieved_ids"])
            expected["reader" if found else "retrieval"] += 1
    got = {k: sum(c[k] for c in counts.get("rag", {}).values()) for k in expected}
    assert got == expected
    if counts:
        assert miss_table(records)[0].startswith("| arm | category |")
