"""`bench.run` over the 16 real LongMemEval-S questions, when the file is present (offline)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.e2e_support import load_records, run_cli

LME_SUBSET = Path(os.environ.get("BENCH_DATA_DIR", "/nonexistent")) / "longmemeval-s-subset16.json"


@pytest.mark.slow
@pytest.mark.skipif(not LME_SUBSET.is_file(), reason="longmemeval-s-subset16.json not present")
def test_longmemeval_subset_runs_through_bench_run(tmp_path: Path) -> None:
    out = tmp_path / "lme"
    proc = run_cli(
        "dataset=longmemeval",
        f"dataset.path={LME_SUBSET}",
        "arms=[raw,rag]",
        "limit.conversations=2",
        f"out={out}",
        "progress=false",
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    records = load_records(out)
    assert len(records) == 2  # one question per LongMemEval haystack
    # has_answer turns are the evidence (`<session id>:<n>`); real questions may have none
    assert any(r["evidence"] for r in records.values())
    for record in records.values():
        assert record["dataset"] == "longmemeval" and record["question_type"]
        for name in ("raw", "rag"):
            result = record["arms"][name]
            assert result["status"] == "ok", result.get("error")
            assert result["answer"] and result["context_tokens"] > 0
            # evidence vs context is told for every arm, raw included (its kept turns)
            found = result.get("evidence_retrieved")
            assert isinstance(found, bool) if record["evidence"] else found is None
        assert record["arms"]["rag"]["retrieved_ids"]
    summary = run_cli(str(out), "--json", module="bench.summarise")
    assert summary.returncode == 0, summary.stderr[-2000:]
