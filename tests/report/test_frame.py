"""bench.report.frame: a run directory as a long pandas DataFrame, and paired views of it.

`make_run` builds the small run directory that the report and notebook tests share.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from bench.errors import BenchError
from bench.records import ArmResult, Judgement, QuestionRecord, write_record
from bench.report.frame import load_run, paired

ARMS = ("raw", "rag", "neuromorphic")
N_QUESTIONS = 20
ERROR_AT = ("conv-2:3", "rag")
"""The one arm result in `error` in the fixture."""


def _qid(i: int) -> str:
    """conv-1 holds questions 0..11 (so `conv-1:10` must sort after `conv-1:9`), conv-2 8."""
    return f"conv-1:{i}" if i < 12 else f"conv-2:{i - 12}"


def _correct(arm: str, i: int) -> bool:
    """raw right on every 3rd question, rag on every even one, neuromorphic on i % 4 != 3."""
    return {"raw": i % 3 == 0, "rag": i % 2 == 0, "neuromorphic": i % 4 != 3}[arm]


def _arm_result(arm: str, i: int, category: int) -> ArmResult:
    if (_qid(i), arm) == ERROR_AT:
        return ArmResult.failed("provider timed out after 6 attempts")
    ok = _correct(arm, i)
    answer = ("Not mentioned in the conversation" if ok else "Paris") if category == 5 else "x"
    scores: dict[str, Any] = {
        "f1": 1.0 if ok else 0.25,
        "em": ok,
        "abstained": category == 5 and ok,
    }
    if category == 5:
        scores["trap_hit"] = not ok
    judgements = {"llm": Judgement(judge_id="llm", status="ok", verdict=ok, model="m")}
    if i == 1:
        judgements["llm"] = Judgement(judge_id="llm", status="error", error="unparsable")
    return ArmResult(
        status="ok",
        answer=answer,
        correct=ok,
        scores=scores,
        context_tokens=100 * (i + 1) + {"raw": 5000, "rag": 0, "neuromorphic": 50}[arm],
        latency_ms=10.0 + i,
        retrieve_ms=1.0,
        outcome="f1>=0.5",
        answerer="offline-extractive",
        cached=i % 5 == 0,
        judgements=judgements,
    )


def make_run(root: Path, *, offline: bool = True, arms: tuple[str, ...] = ARMS) -> Path:
    """Write a 20-question, 3-arm LoCoMo-style run (categories 1-5, one error) under root."""
    run_dir = root / "run"
    for i in range(N_QUESTIONS):
        category = i % 5 + 1
        qid = _qid(i)
        record = QuestionRecord(
            question_id=qid,
            dataset="locomo",
            conversation_id=qid.split(":")[0],
            category=category,
            question=f"Question {i}?",
            gold=None if category == 5 else f"gold {i}",
            evidence=[f"D1:{i}"],
            arms={arm: _arm_result(arm, i, category) for arm in arms},
            adversarial_answer="Paris" if category == 5 else None,
        )
        write_record(run_dir, qid.replace(":", "_"), record)
    sha = hashlib.sha256(b"fixture").hexdigest()
    meta = {
        "schema_version": 1,
        "run_name": "run",
        "arms": list(arms),
        "dataset": {"name": "locomo", "path": "/data/locomo10.json", "sha256": sha},
        "provider": {
            "name": "offline" if offline else "openai",
            "answerer_model": "offline-extractive" if offline else "gpt-4o-mini",
        },
        "offline": offline,
        "outcome": "f1>=0.5" if offline else "judge:llm",
        "judges": [{"judge_id": "llm", "model": "m", "prompt_hash": "abc"}],
        "provenance": {"git_commit": "0" * 40, "git_dirty": False},
    }
    (run_dir / "run.json").write_text(json.dumps(meta), encoding="utf-8")
    return run_dir


def snapshot(run_dir: Path) -> dict[str, bytes]:
    """Every file under run_dir and its bytes (to prove a reader wrote nothing)."""
    return {str(p): p.read_bytes() for p in sorted(run_dir.rglob("*")) if p.is_file()}


def test_load_run_has_one_row_per_question_and_arm(tmp_path: Path) -> None:
    df = load_run(make_run(tmp_path))
    assert len(df) == N_QUESTIONS * len(ARMS)
    assert list(df["arm"].unique()) == list(ARMS)
    expected = {
        "question_id",
        "conversation_id",
        "category",
        "category_label",
        "question",
        "gold",
        "arm",
        "status",
        "answer",
        "correct",
        "f1",
        "em",
        "abstained",
        "trap_hit",
        "context_tokens",
        "latency_ms",
        "retrieve_ms",
        "cached",
        "error",
        "judge:llm",
    }
    assert expected <= set(df.columns)
    order = list(dict.fromkeys(df["question_id"]))
    assert order == [_qid(i) for i in range(N_QUESTIONS)]  # natural order: :9 before :10


def test_load_run_values_follow_the_records(tmp_path: Path) -> None:
    df = load_run(make_run(tmp_path)).set_index(["question_id", "arm"])
    for i in range(N_QUESTIONS):
        for arm in ARMS:
            row = df.loc[(_qid(i), arm)]
            if (_qid(i), arm) == ERROR_AT:
                assert row["status"] == "error" and pd.isna(row["correct"])
                assert row["error"].startswith("provider timed out")
                continue
            assert row["correct"] == _correct(arm, i)
            assert row["f1"] == (1.0 if _correct(arm, i) else 0.25)
            assert row["category"] == i % 5 + 1
            assert pd.isna(row["judge:llm"]) if i == 1 else row["judge:llm"] == _correct(arm, i)
    cat5 = df[df["category"] == 5]
    assert cat5["gold"].isna().all() and cat5["trap_hit"].notna().all()
    assert df[df["category"] != 5]["trap_hit"].isna().all()


def test_category_labels_follow_the_scheme(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path)
    official = load_run(run_dir).drop_duplicates("category").set_index("category")
    mem0 = load_run(run_dir, labels="mem0").drop_duplicates("category").set_index("category")
    assert official.loc[1, "category_label"] == "multi-hop"
    assert official.loc[4, "category_label"] == "single-hop"
    assert mem0.loc[1, "category_label"] == "single-hop"
    assert mem0.loc[3, "category_label"] == "multi-hop"
    assert official.loc[5, "category_label"] == mem0.loc[5, "category_label"] == "adversarial"
    with pytest.raises(BenchError, match="labels"):
        load_run(run_dir, labels="nope")


def test_paired_aligns_on_question_id(tmp_path: Path) -> None:
    df = load_run(make_run(tmp_path))
    shuffled = df.sample(frac=1.0, random_state=0)  # alignment must not rely on row order
    wide = paired(shuffled, "raw", "rag")
    assert len(wide) == N_QUESTIONS
    assert wide["question_id"].is_unique
    for _, row in wide.iterrows():
        i = [_qid(k) for k in range(N_QUESTIONS)].index(row["question_id"])
        assert row["correct_raw"] == _correct("raw", i)
        if (row["question_id"], "rag") == ERROR_AT:
            assert pd.isna(row["pair"]) and row["status_rag"] == "error"
            continue
        assert row["correct_rag"] == _correct("rag", i)
        a, b = _correct("raw", i), _correct("rag", i)
        expected = {(1, 1): "both", (1, 0): "a_only", (0, 1): "b_only", (0, 0): "neither"}
        assert row["pair"] == expected[(int(a), int(b))]


def test_paired_discordant_counts(tmp_path: Path) -> None:
    wide = paired(load_run(make_run(tmp_path)), "raw", "neuromorphic")
    a_only = sum(_correct("raw", i) and not _correct("neuromorphic", i) for i in range(20))
    b_only = sum(_correct("neuromorphic", i) and not _correct("raw", i) for i in range(20))
    counts = wide["pair"].value_counts()
    assert counts.get("a_only", 0) == a_only and counts.get("b_only", 0) == b_only
    assert a_only + b_only > 0


def test_paired_rejects_unknown_or_same_arm(tmp_path: Path) -> None:
    df = load_run(make_run(tmp_path))
    with pytest.raises(ValueError, match="nope"):
        paired(df, "raw", "nope")
    with pytest.raises(ValueError, match="two different"):
        paired(df, "raw", "raw")


def test_load_run_never_writes(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path)
    before = snapshot(run_dir)
    load_run(run_dir)
    assert snapshot(run_dir) == before


def test_load_run_bad_directory(tmp_path: Path) -> None:
    with pytest.raises(BenchError, match="no such run directory"):
        load_run(tmp_path / "missing")
    with pytest.raises(BenchError, match="no questions/ folder"):
        load_run(tmp_path)
