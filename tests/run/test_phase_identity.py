"""`phase=evaluate` may choose what `phase=predict` never read; what it read stays bound.

predict (ingest and retrieve) binds the run directory to the dataset, arm options,
embedder and extractor, and each prediction to those plus, for an arm that reads it (raw),
the context budget; the answer
prompt, answerer, answer and scoring settings are chosen by the first evaluate, which
then binds them like any run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.e2e_support import last_line, run_cli

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


def _identities(*overrides: str) -> dict[str, str]:
    """Each arm's predict identity under the default config and `overrides`."""
    from hydra import compose, initialize_config_dir

    from bench.paths import CONF_DIR
    from bench.run.phases import predict_identity
    from bench.run.settings import load_run_config

    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = load_run_config(compose(config_name="config", overrides=list(overrides)))
    return {arm: predict_identity(cfg, arm, "sha") for arm in cfg.arms}


def test_the_context_budget_binds_only_the_arms_that_read_it() -> None:
    """raw cuts its transcript to `answer.max_context_tokens`; rag and the memory arms never
    read it, so a changed budget leaves their predict identity as it was."""
    before = _identities()
    after = _identities("answer.max_context_tokens=30000")
    assert set(before) == {"raw", "rag", "neuromorphic", "tuned"}
    assert before["raw"] != after["raw"]
    assert {a: before[a] for a in ("rag", "neuromorphic", "tuned")} == {
        a: after[a] for a in ("rag", "neuromorphic", "tuned")
    }
    assert _identities("arm_options.rag.top_k=5")["rag"] != before["rag"]  # options still bind


@pytest.mark.slow
def test_evaluate_may_change_the_budget_when_no_arm_read_it(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert run(out, "arms=[rag]", "phase=predict").returncode == 0
    done = run(out, "arms=[rag]", "phase=evaluate", "answer.max_context_tokens=30000")
    assert done.returncode == 0, done.stderr[-2000:]
