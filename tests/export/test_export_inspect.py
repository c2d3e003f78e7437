"""`python -m bench.export RUN --format inspect`: inspect logs read back with inspect_ai's API."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.support.e2e_support import ROOT, last_line, load_records, run_cli
from tests.support.judge_stub import JudgeStub

pytestmark = pytest.mark.inspect
inspect_log = pytest.importorskip(
    "inspect_ai.log", reason="inspect_ai not installed (pip install 'armbench[inspect]')"
)

SHARED = Path(os.environ.get("BENCH_DATA_DIR") or ROOT.parent / "shared" / "data")


def stub_verdict(body: dict[str, Any]) -> str:
    """A deterministic judge: the verdict is a hash bit of the prompt."""
    content = body["messages"][-1]["content"]
    bit = int(hashlib.sha256(content.encode()).hexdigest(), 16) % 3 != 0
    return json.dumps({"reasoning": "stub", "correct": bit})


def export(run: Path, out: Path, *extra: str) -> list[Path]:
    """Run the export CLI; return the paths it printed."""
    proc = run_cli(
        str(run), "--format", "inspect", "--out", str(out), *extra, module="bench.export"
    )
    assert proc.returncode == 0, proc.stderr
    return [Path(line) for line in proc.stdout.split()]


def check_log(path: Path, run: Path, arm: str) -> Any:
    """Every record of `arm` is a sample with its answer and every score of the record."""
    log = inspect_log.read_eval_log(str(path))
    records = load_records(run)
    assert log.status == "success"
    assert log.eval.task.endswith(f"/{arm}") and log.eval.metadata["arm"] == arm
    assert log.eval.metadata["provenance"]["armbench"]
    assert "verdict" in log.eval.metadata and "flagged" in log.eval.metadata["verdict"]
    samples = {s.id: s for s in log.samples}
    assert set(samples) == set(records)
    for qid, record in records.items():
        res, sample = record["arms"][arm], samples[qid]
        assert sample.input == record["question"]
        assert sample.target == (record["gold"] or "")
        assert sample.output.completion == res["answer"]
        outcome = sample.scores["outcome"]
        assert outcome.value == ("C" if res["correct"] else "I")
        assert outcome.explanation == res["outcome"]
        assert sample.scores["f1"].value == pytest.approx(res["scores"]["f1"])
        for judge_id, verdict in res.get("judgements", {}).items():
            assert sample.scores[f"judge/{judge_id}"].value == ("C" if verdict["verdict"] else "I")
        meta = sample.metadata
        assert meta["category"] == record["category"]
        assert meta["conversation_id"] == record["conversation_id"]
        assert meta["retrieved_ids"] == res.get("retrieved_ids", [])
        assert meta["context_tokens"] == res["context_tokens"]
        assert isinstance(meta["flags"], list)
    assert log.results.total_samples == len(records)
    return log


@pytest.mark.slow
@pytest.mark.skipif(not (SHARED / "locomo10.json").is_file(), reason="no locomo10.json offline")
def test_offline_locomo_run_exports_one_log_per_arm(tmp_path: Path) -> None:
    run, out = tmp_path / "run", tmp_path / "logs"
    proc = run_cli(
        "dataset=locomo",
        "dataset.errata=null",
        "limit.conversations=1",
        "limit.questions=4",
        "arms=[raw,rag]",
        f"out={run}",
        "progress=false",
        env={"BENCH_DATA_DIR": str(SHARED)},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    paths = export(run, out)
    assert [p.name for p in paths] == ["run-raw.eval", "run-rag.eval"]
    for path, arm in zip(paths, ("raw", "rag"), strict=True):
        log = check_log(path, run, arm)
        assert log.eval.dataset.name == "locomo"
        assert log.eval.metadata["offline"] is True
    rag = inspect_log.read_eval_log(str(paths[1]))
    assert any(s.metadata["retrieved_ids"] for s in rag.samples)  # rag's ids travel


@pytest.mark.slow
def test_stub_judged_smoke_run_exports_every_verdict(tmp_path: Path) -> None:
    run, out = tmp_path / "run", tmp_path / "logs"
    with JudgeStub(stub_verdict) as server:
        proc = run_cli(
            "dataset=smoke",
            "arms=[raw]",
            f"out={run}",
            "progress=false",
            "judge=llm",
            "judges.0.endpoint.kind=openai",
            "judges.0.endpoint.model=stub-judge",
            f"judges.0.endpoint.base_url={server.base_url}",
            "judges.0.endpoint.api_key_env=null",
        )
    assert proc.returncode == 0, proc.stderr[-2000:]
    (path,) = export(run, out, "--arm", "raw")
    log = check_log(path, run, "raw")
    assert all("judge/llm" in s.scores for s in log.samples)
    assert {s.scores["outcome"].explanation for s in log.samples} == {"judge:llm"}
    assert log.eval.metadata["outcome"] == "judge:llm"
    assert log.eval.metadata["judges"][0]["model"] == "stub-judge"
    accuracy = log.results.scores[0].metrics["accuracy_all"].value
    correct = [s.scores["outcome"].value == "C" for s in log.samples]
    assert accuracy == pytest.approx(sum(correct) / len(correct))


def test_bad_export_arguments_are_one_line(tmp_path: Path) -> None:
    proc = run_cli(
        str(tmp_path), "--format", "inspect", "--out", str(tmp_path / "o"), module="bench.export"
    )
    assert proc.returncode == 2
    assert last_line(proc.stderr) == proc.stderr.strip()
    assert proc.stderr.startswith(f"error: {tmp_path}: no questions/ folder")
    proc = run_cli(str(tmp_path), "--format", "inspekt", "--out", "o", module="bench.export")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert "invalid choice: 'inspekt'" in proc.stderr
