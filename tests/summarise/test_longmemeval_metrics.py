"""LongMemEval's metrics equal what upstream's print_qa_metrics.py prints for the same labels."""

from __future__ import annotations

import contextlib
import io
import json
import random
import re
import sys
from pathlib import Path

import pytest

from bench.records import ArmResult, QuestionRecord
from bench.summarise.longmemeval_metrics import (
    UPSTREAM_TYPES,
    longmemeval_json,
    longmemeval_metrics,
    render_longmemeval,
)
from tests.support.judge_stub import shared_data_dir


def _records(seed: int = 7) -> list[QuestionRecord]:
    rng = random.Random(seed)
    out = []
    for i in range(60):
        qtype = UPSTREAM_TYPES[i % len(UPSTREAM_TYPES)]
        qid = f"q{i}_abs" if i % 7 == 0 else f"q{i}"
        arm = ArmResult(status="ok", correct=rng.random() < 0.6, scores={})
        out.append(QuestionRecord(qid, "lme", qid, 0, "q?", "a", [], {"raw": arm}, None, qtype))
    return out


def test_metrics_match_upstream_print_qa_metrics(tmp_path: Path) -> None:
    shared = shared_data_dir()
    if shared is None:
        pytest.skip("shared data (judges/) absent")
    records = _records()
    hyp, ref = tmp_path / "hyp.jsonl", tmp_path / "ref.json"
    with hyp.open("w") as fh:
        for r in records:
            label = {"model": "gpt-4o-2024-08-06", "label": r.arms["raw"].correct}
            fh.write(json.dumps({"question_id": r.question_id, "autoeval_label": label}) + "\n")
    ref.write_text(
        json.dumps(
            [{"question_id": r.question_id, "question_type": r.question_type} for r in records]
        )
    )
    script = (shared / "judges" / "longmemeval-print_qa_metrics.py").read_text()
    out = io.StringIO()
    argv = sys.argv
    sys.argv = ["print_qa_metrics.py", str(hyp), str(ref)]
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(script, "print_qa_metrics.py", "exec"), {"__name__": "__main__"})  # noqa: S102
    finally:
        sys.argv = argv
    printed = out.getvalue()

    def number(label: str) -> float:
        match = re.search(rf"{label}: ([0-9.]+)", printed)
        assert match, printed
        return float(match.group(1))

    ours = longmemeval_metrics(records, ["raw"])["raw"]
    assert round(ours.task_averaged or 0, 4) == number("Task-averaged Accuracy")
    assert round(ours.overall or 0, 4) == number("Overall Accuracy")
    k, n = ours.abstention
    assert round(k / n, 4) == number("Abstention Accuracy")
    for qtype in UPSTREAM_TYPES:
        kt, nt = ours.by_type[qtype]
        assert f"{qtype}: {round(kt / nt, 4)} ({nt})" in printed


def test_results_without_an_outcome_are_left_out_and_counted() -> None:
    records = _records()
    records[1].arms["raw"].correct = None
    records[2].arms["raw"].status = "error"
    metrics = longmemeval_metrics(records, ["raw", "absent"])
    assert metrics["raw"].uncounted == 2
    assert sum(n for _, n in metrics["raw"].by_type.values()) == 58
    assert metrics["absent"].uncounted == 60 and metrics["absent"].overall is None
    assert longmemeval_json(metrics)["raw"]["not_counted"] == 2
    text = "\n".join(render_longmemeval(metrics, "judge:longmemeval_official"))
    assert "task-averaged" in text and "6 of upstream's 6 types" in text
