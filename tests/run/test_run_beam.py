"""`bench.run` end to end on the BEAM smoke fixture: every default arm, paired, summarised."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from bench.summarise.cautions import CAUTIONS, OFFLINE_CAUTION
from tests.support.e2e_support import load_records, run_cli

ARMS = ("raw", "rag", "neuromorphic", "tuned")


@pytest.mark.slow
def test_smoke_beam_runs_every_default_arm_and_summarises(tmp_path: Path) -> None:
    """7 questions, each answered by every arm; the summary groups by ability, no LoCoMo notes."""
    out = tmp_path / "beam"
    proc = run_cli("dataset=smoke_beam", f"out={out}", "progress=false")
    assert proc.returncode == 0, proc.stderr[-2000:]
    records = load_records(out)
    assert len(records) == 7
    for record in records.values():
        assert record["dataset"] == "smoke_beam" and record["question_type"]
        assert set(record["arms"]) == set(ARMS)
        for result in record["arms"].values():
            assert result["status"] == "ok" and "rubric_reach_offline" in result["scores"]
    order = records["beam-128k-1:event_ordering:0"]["arms"]["rag"]["scores"]
    assert {"event_order_f1_offline", "event_order_tau_b_offline"} <= set(order)
    proc = run_cli(str(out), "--json", module="bench.summarise")
    assert proc.returncode == 0, proc.stderr[-2000:]
    summary = json.loads(proc.stdout)
    assert summary["group_kind"] == "question_type"
    assert {c["label"] for c in summary["categories"].values()} >= {"abstention", "event_ordering"}
    notes = " ".join(summary["notes"])
    assert CAUTIONS["beam"] in notes and OFFLINE_CAUTION not in notes
    # abstention questions are not counted as answerable
    assert summary["arms"]["raw"]["abstention_rate_answerable"]["n"] == 6


@pytest.mark.slow
def test_locomo_plus_records_the_seed(tmp_path: Path) -> None:
    """One stitched haystack end to end: the seed is in run.json and the record."""
    data = Path(os.environ.get("BENCH_DATA_DIR", "/work/shared/data"))
    if not (data / "locomo-plus" / "locomo_plus.json").is_file():
        pytest.skip("no shared LoCoMo-Plus copy on this machine")
    out = tmp_path / "plus"
    proc = run_cli(
        "dataset=locomo_plus",
        "dataset.seed=3",
        "arms=[raw,rag]",
        "limit.conversations=1",
        f"out={out}",
        "progress=false",
        env={"BENCH_DATA_DIR": str(data)},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    (record,) = load_records(out).values()
    assert record["question_id"] == "plus-000:causal"
    assert record["provenance"]["dataset_seed"] == 3
    meta = json.loads((out / "run.json").read_text())
    assert meta["identity"]["dataset_seed"] == 3 and meta["config"]["dataset"]["seed"] == 3
    assert record["evidence"] == ["CUE:1", "CUE:2"]
