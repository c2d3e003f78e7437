"""`phase=evaluate` may choose what `phase=predict` never read; what it read stays bound.

predict (ingest and retrieve) binds the run directory to the dataset, arm options,
embedder and extractor, and each prediction to those plus the context budget; the answer
prompt, answerer, answer and scoring settings are chosen by the first evaluate, which
then binds them like any run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e_support import last_line, run_cli

BASE = ("dataset=smoke", "arms=[raw,rag]", "progress=false", "limit.conversations=1")


def run(out: Path, *extra: str):  # noqa: ANN201 - a CompletedProcess
    """`python -m bench.run` on one smoke conversation, offline."""
    return run_cli(*BASE, f"out={out}", *extra)


@pytest.mark.slow
def test_evaluate_chooses_answer_settings_predict_did_not_read(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert run(out, "phase=predict").returncode == 0
    done = run(out, "phase=evaluate", "answer.max_tokens=64", "scoring.f1_threshold=0.4")
    assert done.returncode == 0, done.stderr[-2000:]
    assert len(list((out / "questions").glob("*.json"))) > 0
    again = run(out, "phase=evaluate", "answer.max_tokens=32")  # now the records bind them
    assert again.returncode == 2
    assert "this run was made with different answer_settings" in last_line(again.stderr)


@pytest.mark.slow
def test_a_changed_context_budget_is_refused_by_the_predictions(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert run(out, "phase=predict").returncode == 0
    refused = run(out, "phase=evaluate", "answer.max_context_tokens=30000")
    assert refused.returncode == 2
    line = last_line(refused.stderr)
    assert line.startswith("error: ") and "predicted under another predict identity" in line
    assert "answer.max_context_tokens" in line
