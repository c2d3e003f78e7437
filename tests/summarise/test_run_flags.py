"""Degraded arms and untrustworthy judges are marked wherever a number is shown.

A crafted tiny-model run: a 270M model judges its own answers (same model and base URL),
accepts every answer although each has F1 0.0, and the neuromorphic arm stored no fact.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.records import ArmResult, Judgement, QuestionRecord, iter_records
from bench.report.explorer import build_explorer, explorer_data
from bench.runmeta import read_run_meta
from bench.summarise import summarise_run
from bench.summarise.comparable import comparable_export
from bench.summarise.flags import DEGENERATE, EXTRACTION_DEGRADED, SELF_JUDGING, compute_flags
from bench.summarise.judge_checks import (
    MAX_MEAN_F1,
    MIN_ACCURACY,
    MIN_ANSWERS,
    Agreement,
    self_judging,
)
from bench.summarise.reach import Reach, render_reach
from bench.summarise.render import render_markdown, render_text
from bench.summarise.render_json import summary_to_json
from bench.summarise.stats import Rate
from tests.summarise.test_summarise import write_run

MODEL, URL = "gemma-3-270m-it", "http://127.0.0.1:8080/v1"


def judged(correct: bool, f1: float, answer: str = "When did Ann go?") -> ArmResult:
    """An ok answer graded by judge `llm`, the outcome being its verdict."""
    verdict = Judgement(judge_id="llm", status="ok", verdict=correct, model=MODEL)
    return ArmResult(
        status="ok",
        answer=answer,
        correct=correct,
        scores={"f1": f1},
        outcome="judge:llm",
        judgements={"llm": verdict},
    )


def meta(judge_url: str = URL + "/", facts: int = 0) -> dict[str, Any]:
    health = {"neuromorphic": {"conv-1": {"exchanges": 12, "failed": 0, "facts": facts}}}
    return {
        "run_name": "tiny",
        "arms": ["raw", "neuromorphic"],
        "outcome": "judge:llm",
        "config": {
            "provider": {"answerer": {"kind": "openai", "model": MODEL, "base_url": URL}},
            "judges": [{"judge_id": "llm", "endpoint": {"model": MODEL, "base_url": judge_url}}],
            "scoring": {"primary_judge": "llm"},
        },
        "extraction_health": health,
    }


def tiny_run(run_dir: Path, *, accept: bool = True, **kw: Any) -> Path:
    """32 LoCoMo questions of categories 1-4, two arms, every answer an echo (F1 0)."""
    records = [
        QuestionRecord(
            question_id=f"conv-1:{i}",
            dataset="locomo",
            conversation_id="conv-1",
            category=1 + i % 4,
            question="When did Ann go?",
            gold="17 March 2031",
            evidence=[],
            arms={"raw": judged(accept, 0.0), "neuromorphic": judged(accept, 0.0)},
        )
        for i in range(32)
    ]
    return write_run(run_dir, records, meta(**kw))


def test_degenerate_rule_at_its_thresholds() -> None:
    edge = Agreement(n=MIN_ANSWERS, accepted=18, f1_sum=0.0)  # 90% accepted at F1 0
    assert edge.degenerate and MIN_ACCURACY == 0.90 and MAX_MEAN_F1 == 0.05
    assert not Agreement(n=MIN_ANSWERS, accepted=17, f1_sum=0.0).degenerate  # 85%
    assert not Agreement(n=MIN_ANSWERS, accepted=20, f1_sum=1.0).degenerate  # mean F1 0.05
    assert not Agreement(n=MIN_ANSWERS - 1, accepted=19, f1_sum=0.0).degenerate  # too few


def test_self_judging_needs_the_same_model_and_endpoint() -> None:
    assert "llm" in self_judging(meta()["config"])  # a trailing "/" is the same endpoint
    assert self_judging(meta(judge_url="http://127.0.0.1:9090/v1")["config"]) == {}


def test_summary_opens_with_the_degenerate_judge_and_marks_every_table(tmp_path: Path) -> None:
    summary = summarise_run(tiny_run(tmp_path / "run"))
    text = render_text(summary)
    lines = text.splitlines()
    assert lines[0].endswith("— DEGENERATE JUDGE")
    assert lines[1].startswith("> - **DEGENERATE JUDGE: the primary judge llm")
    assert "100.0% accepted at mean F1 0.000 over 64 answers (all arms)" in lines[2]
    assert any("self-judging" in ln for ln in lines[2:4])
    assert "DEGRADED arm neuromorphic: extraction degraded" in lines[4]
    mark = " [judge llm: degenerate, self-judging]"
    assert f"| arm{mark} | acc scored" in text  # the accuracy table
    assert f"| category{mark} |" in text  # the per-category table
    assert f"| A{mark} | B |" in text  # the paired table
    label = "neuromorphic [DEGRADED: extraction degraded]"
    assert text.count(label) >= 3  # accuracy row, category column, pair row
    reach = render_reach([Reach("neuromorphic", Rate(32, 32), 0.0, 0.0)], summary.flags.arm_label)
    assert f"| {label} | 100.0% (n=32) |" in "\n".join(reach)  # reachability beside accuracy
    assert render_markdown(summary).splitlines()[0] == lines[0]
    flags = summary_to_json(summary)["flags"]
    assert flags["primary_degenerate"] and set(flags["arms"]) == {"neuromorphic"}
    kinds = {f["kind"] for f in flags["judges"]["llm"]}
    assert kinds == {DEGENERATE, SELF_JUDGING}


def test_comparable_export_and_explorer_carry_the_flags(tmp_path: Path) -> None:
    run_dir = tiny_run(tmp_path / "run")
    summary = summarise_run(run_dir)
    entries = comparable_export(summary, iter_records(run_dir))["submissions"]
    by_arm = {e["metadata"]["arm"]: e["metadata"]["flags"] for e in entries}
    assert by_arm["neuromorphic"]["degraded"] and by_arm["raw"]["degraded"]  # the judge
    assert [f["kind"] for f in by_arm["neuromorphic"]["arm"]] == [EXTRACTION_DEGRADED]
    assert by_arm["raw"]["arm"] == [] and len(by_arm["raw"]["judge"]) == 2
    page = build_explorer(run_dir, read_run_meta(run_dir / "run.json")[0])
    assert "DEGENERATE JUDGE: the primary judge llm" in page
    blob = json.loads(page.split('id="data">', 1)[1].split("</script>", 1)[0])
    assert blob["arm_labels"] == ["raw", "neuromorphic [DEGRADED: extraction degraded]"]


def test_report_charts_and_tables_carry_the_flags(tmp_path: Path) -> None:
    pytest.importorskip("plotly")
    from bench.report import page as report

    run_dir = tiny_run(tmp_path / "run")
    page = report.build_report(run_dir)
    assert "DEGENERATE JUDGE: the primary judge llm" in page
    assert "neuromorphic [DEGRADED: extraction degraded]" in page
    assert "Accuracy per arm (Wilson 95% interval) [judge llm: degenerate, self-judging]" in page


def test_an_honest_run_has_no_flags_and_renders_as_before(tmp_path: Path) -> None:
    """A judge that rejects F1-0 echoes, on its own endpoint, with a healthy arm: no marks."""
    run_dir = tiny_run(
        tmp_path / "run", accept=False, judge_url="http://127.0.0.1:9090/v1", facts=9
    )
    summary = summarise_run(run_dir)
    assert not summary.flags and "flags" not in summary_to_json(summary)
    text = render_text(summary)
    assert "DEGRADED" not in text and "DEGENERATE" not in text and "[judge" not in text
    records = iter_records(run_dir)
    assert explorer_data(records, {})["arm_labels"] == ["raw", "neuromorphic"]
    assert not compute_flags(None, records)


def test_missing_verdicts_open_the_summary_with_their_count(tmp_path: Path) -> None:
    """A judge that failed on some answers: the first lines say how many (issue 41)."""
    run = tiny_run(tmp_path / "run", judge_url="http://127.0.0.1:9090/v1")
    records = sorted((run / "questions").glob("*.json"))
    for path in records[:3]:
        data = json.loads(path.read_text())
        data["arms"]["raw"]["judgements"]["llm"] = {
            "judge_id": "llm",
            "status": "error",
            "verdict": None,
            "model": MODEL,
            "error": "judge call failed: ProviderError: HTTP 500",
        }
        data["arms"]["raw"]["correct"] = None
        path.write_text(json.dumps(data))
    lines = render_text(summarise_run(run)).splitlines()
    assert "FLAGGED primary judge llm: missing verdicts — 3 of 64 verdicts missing" in lines[2]
