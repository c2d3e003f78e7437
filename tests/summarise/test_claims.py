"""The claim boundary: each reason a run is not publishable, triggered and then cleared.

A constructed clean run (an official judge with upstream's model, a calibration on file
showing it tells gold from wrong, full coverage, one commit, 320 scored questions) says
`publishable: true` and nothing else; each case below breaks one thing, checks that
exactly its reason code appears (for the arm it concerns), and that the fix clears it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bench.files import write_json_atomic
from bench.ledger import LEDGER_FILE, reruns_by_outcome
from bench.records import ArmResult, Judgement, QuestionRecord, write_record
from bench.summarise.render import render_markdown
from bench.summarise.render_json import summary_to_json
from bench.summarise.summary import summarise_run

N = 320
JUDGE = "mem0_locomo"
HASH = "ab" * 32
Edit = Callable[[dict[str, Any]], None]


def _result(i: int, arm: str, spec: dict[str, Any]) -> ArmResult:
    """An ok, judged answer; every third wrong; F1 follows the verdict (not degenerate)."""
    right = i % 3 != 0
    if spec.get("error") == (arm, i):
        return ArmResult.failed("answerer timed out")
    verdict = True if spec.get("accept_all") else right
    f1 = 0.0 if spec.get("accept_all") else (0.8 if right else 0.1)
    return ArmResult(
        status="ok",
        answer="x",
        correct=verdict,
        scores={"f1": f1, "abstained": False},
        latency_ms=10.0,
        context_tokens=spec.get("ctx", {}).get(arm, 100),
        outcome=f"judge:{JUDGE}",
        judgements={JUDGE: Judgement(JUDGE, "ok", verdict, model="gpt-4o-mini", prompt_hash=HASH)},
    )


def _records(spec: dict[str, Any]) -> list[QuestionRecord]:
    out = []
    for i in range(spec.get("n", N)):
        prov = {"git_commit": "c1" * 20, "git_dirty": False}
        if spec.get("commit_from") is not None and i >= spec["commit_from"]:
            prov["git_commit"] = "c2" * 20
        if spec.get("dirty") == i:
            prov["git_dirty"] = True
        arms = {a: _result(i, a, spec) for a in ("mem", "rag")}
        out.append(
            QuestionRecord(
                question_id=f"conv-{i // 40}:{i % 40}",
                dataset="locomo",
                conversation_id=f"conv-{i // 40}",
                category=1 + i % 4,
                question=f"Q{i}?",
                gold="gold",
                evidence=[],
                arms=arms,
                provenance=prov,
            )
        )
    return out


def _meta(n: int) -> dict[str, Any]:
    endpoint = {"model": "gpt-4o-mini", "base_url": "https://judge.example/v1"}
    return {
        "schema_version": 1,
        "run_name": "clean",
        "arms": ["mem", "rag"],
        "offline": False,
        "outcome": f"judge:{JUDGE}",
        "dataset": {"name": "locomo", "sha256": "d" * 64},
        "dataset_stats": {"conversations": 8, "sessions": 200, "questions": n},
        "provider": {"name": "openai", "answerer_model": "gpt-4.1"},
        "judges": [
            {
                "judge_id": JUDGE,
                "model": "gpt-4o-mini",
                "prompt_hash": HASH,
                "kind": JUDGE,
                "official_model": "gpt-4o-mini",
                "model_differs": False,
            }
        ],
        "config": {
            "dataset": {"loader": "locomo"},
            "provider": {"answerer": {"model": "gpt-4.1", "base_url": "https://a.example/v1"}},
            "judges": [{"judge_id": JUDGE, "endpoint": endpoint}],
            "scoring": {"primary_judge": JUDGE},
            "arm_options": {"mem": {"top_k": 10}, "rag": {"top_k": 10}},
            "limit": {"conversations": None, "questions": None},
        },
    }


def _calibration(gold: tuple[int, int], wrong: tuple[int, int]) -> dict[str, Any]:
    def cell(name: str, truth: str, counts: tuple[int, int]) -> dict[str, Any]:
        k, n = counts
        return {
            "judge": JUDGE,
            "set": name,
            "truth": truth,
            "group": "all",
            "n": n,
            "accepted": k,
            "no_verdict": 0,
            "rate": k / n,
            "ci": [k / n, k / n],
        }

    return {
        "format": "armbench-calibration/1",
        "judges": [{"name": JUDGE, "model": "gpt-4o-mini", "prompt_hash": HASH}],
        "cells": [cell("gold", "right", gold), cell("other_gold", "wrong", wrong)],
    }


def build(tmp_path: Path, spec: dict[str, Any] | None = None, edit: Edit | None = None) -> Path:
    """The clean run, changed by `spec` (records) and `edit` (run.json)."""
    spec = spec or {}
    run = tmp_path / str(spec.get("where", "run"))
    records = _records(spec)
    for rec in records:
        write_record(run, rec.question_id.replace(":", "_"), rec)
    meta = _meta(len(records))
    if edit:
        edit(meta)
    write_json_atomic(run / "run.json", meta)
    if spec.get("calibration", True):
        gold, wrong = spec.get("gold", (95, 100)), spec.get("wrong", (4, 100))
        write_json_atomic(run / "calibration.json", _calibration(gold, wrong))
    if spec.get("ledger"):
        (run / LEDGER_FILE).write_text("".join(json.dumps(e) + "\n" for e in spec["ledger"]))
    return run


def codes(run: Path) -> dict[str, tuple[str, ...]]:
    """Reason code -> the arms it names (empty: the whole run)."""
    return {r.code: r.arms for r in summarise_run(run).verdict.reasons}


def test_a_clean_judged_run_is_publishable_and_says_nothing_else(tmp_path: Path) -> None:
    summary = summarise_run(build(tmp_path))
    assert summary.verdict.publishable and summary.verdict.reasons == ()
    md = render_markdown(summary).splitlines()
    assert md[1] == "> **publishable: true**" and not md[2].startswith(">")
    data = summary_to_json(summary)["verdict"]
    assert data == {
        "publishable": True,
        "reasons": [],
        "arms": {
            arm: {"publishable": True, "reasons": [], "scale": f"judge:{JUDGE} (gpt-4o-mini)"}
            for arm in ("mem", "rag")
        },
    }


def _set(path: str, value: Any) -> Edit:
    def edit(meta: dict[str, Any]) -> None:
        *parents, key = path.split(".")
        node: Any = meta
        for part in parents:
            node = node[int(part)] if part.isdigit() else node[part]
        node[key] = value

    return edit


def _self_judge(meta: dict[str, Any]) -> None:
    meta["config"]["provider"]["answerer"] = dict(meta["config"]["judges"][0]["endpoint"])


def _degraded(meta: dict[str, Any]) -> None:
    meta["extraction_health"] = {"mem": {"conv-0": {"exchanges": 10, "failed": 9, "facts": 0}}}


def _wrong_then(status: str) -> list[dict[str, Any]]:
    first = {
        "question_id": "conv-0:0",
        "arm": "rag",
        "action": "answer",
        "status": status,
        "outcome": False if status == "ok" else None,
        "record": "a",
    }
    return [first, {**first, "status": "ok", "outcome": True, "record": "b"}]


# code, arms it names (() = the run), what breaks it (spec, run.json edit), what fixes it
Case = tuple[str, tuple[str, ...], dict[str, Any], Edit | None, dict[str, Any], Edit | None]
UNINFORMATIVE, INFORMATIVE = {"gold": (3, 8), "wrong": (3, 8)}, {"gold": (8, 8), "wrong": (0, 8)}
HELD_OUT = _set("config.held_out", "conv-41..conv-50")
SIZES = _set("conversation_tokens", {f"conv-{i}": 1000 for i in range(8)})  # coverage known
IN_SWEEP = {"where": "sweep/job-0"}
CASES: list[Case] = [
    ("offline-answerer", (), {}, _set("offline", True), {}, None),
    ("unofficial-outcome", (), {}, _set("judges.0.kind", "locomo"), {}, None),
    ("unofficial-outcome", (), {}, _set("judges.0.model_differs", True), {}, None),
    ("judge-uncalibrated", (), {"calibration": False}, None, {}, None),
    ("judge-uninformative", (), UNINFORMATIVE, None, INFORMATIVE, None),
    ("judge-strict", (), {"gold": (50, 100)}, None, {"gold": (97, 100)}, None),
    ("judge-lenient", (), {"wrong": (40, 100)}, None, {"wrong": (4, 100)}, None),
    ("judge-degenerate", (), {"accept_all": True}, None, {}, None),
    ("judge-self-judging", (), {}, _self_judge, {}, None),
    ("arm-degraded", ("mem",), {}, _degraded, {}, None),
    ("incomplete-coverage", ("rag",), {"error": ("rag", 5)}, None, {}, None),
    ("incomplete-coverage", (), {}, _set("config.limit.questions", 40), {}, None),
    ("incomplete-coverage", (), {}, _set("dataset_stats.questions", N + 10), {}, None),
    ("mixed-code-versions", (), {"commit_from": 300}, None, {}, None),
    ("dirty-tree", (), {"dirty": 7}, None, {}, None),
    ("rerun-by-outcome", ("rag",), {"ledger": _wrong_then("ok")}, None,
     {"ledger": _wrong_then("error")}, None),
    ("tuned-in-sample", (), IN_SWEEP, None, IN_SWEEP, HELD_OUT),
    ("near-full-context", ("rag",), {}, _set("config.arm_options.rag.top_k", 25), {}, None),
    ("near-full-context", ("rag",), {"ctx": {"rag": 900}}, SIZES, {}, SIZES),
    ("too-few-questions", (), {"n": 40}, _set("dataset_stats.questions", 40), {}, None),
]  # fmt: skip


@pytest.mark.parametrize(
    ("code", "arms", "broken", "edit", "fixed", "fix"),
    CASES,
    ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)],
)
def test_each_reason_is_triggered_and_cleared(
    tmp_path: Path,
    code: str,
    arms: tuple[str, ...],
    broken: dict[str, Any],
    edit: Edit | None,
    fixed: dict[str, Any],
    fix: Edit | None,
) -> None:
    for side in ("broken", "fixed") if broken.get("where", "").startswith("sweep/") else ():
        rows = tmp_path / side / "sweep" / "sweep-rows"
        rows.mkdir(parents=True)
        for job in ("job-0", "job-1"):
            (rows / f"{job}.json").write_text("{}")
    found = codes(build(tmp_path / "broken", broken, edit))
    assert code in found and found[code] == arms, found
    if code == "too-few-questions":
        return  # cleared by the clean run itself (N = 320)
    assert code not in codes(build(tmp_path / "fixed", fixed, fix))


def test_reasons_reach_the_first_lines_and_json(tmp_path: Path) -> None:
    summary = summarise_run(build(tmp_path, {"error": ("rag", 5)}, _set("offline", True)))
    md = render_markdown(summary).splitlines()
    assert md[1] == "> **publishable: false (2 reasons)**"
    assert md[2].startswith("> - offline-answerer: answers come from the offline")
    assert md[3] == "> - incomplete-coverage (arm rag): 1 results in error of 320 scored questions"
    data = summary_to_json(summary)["verdict"]
    assert data["arms"]["rag"]["reasons"] == ["offline-answerer", "incomplete-coverage"]
    assert data["arms"]["mem"] == {
        "publishable": False,
        "reasons": ["offline-answerer"],
        "scale": f"judge:{JUDGE} (gpt-4o-mini)",
    }


def test_resuming_errors_and_rejudging_are_not_reruns() -> None:
    base: dict[str, Any] = {"question_id": "q", "arm": "a", "record": "x"}
    ledger = [
        {**base, "action": "answer", "status": "error", "outcome": None},
        {**base, "action": "answer", "status": "ok", "outcome": False},
        {**base, "action": "judge", "status": "ok", "outcome": True},
        {**base, "question_id": "p", "action": "answer", "status": "ok", "outcome": False},
        {**base, "question_id": "p", "action": "answer", "status": "ok", "outcome": True},
    ]
    assert reruns_by_outcome(ledger) == {"a": ["p"]}


def test_a_rubric_judge_giving_full_marks_to_answers_sharing_no_word_is_degenerate() -> None:
    """The degenerate rule over a rubric judge's kept means on F1 = 0 answers."""
    from bench.summarise.judge_checks import agreements, degenerate_reason

    def rubric(kept: float, f1: float) -> QuestionRecord:
        scores = {"rubric": kept, "rubric_kept": kept, "rubric_items": 2}
        verdict = Judgement("beam_official", "ok", None, model="m", scores=scores)
        res = ArmResult(
            status="ok",
            answer="x",
            correct=False,
            scores={"f1": f1},
            outcome="f1>=0.5",
            judgements={"beam_official": verdict},
        )
        return QuestionRecord(
            "b:1",
            "beam",
            "b",
            0,
            "Q?",
            "gold",
            [],
            {"raw": res},
            question_type="information_extraction",
        )

    always = agreements([rubric(1.0, 0.0)] * 20 + [rubric(1.0, 0.5)] * 5)
    assert degenerate_reason(always["beam_official"]) == (
        "100.0% accepted at mean F1 0.000 over 20 answers (all arms)"
    )
    honest = agreements([rubric(0.0, 0.0)] * 15 + [rubric(1.0, 0.0)] * 5)
    assert degenerate_reason(honest["beam_official"]) is None


@pytest.mark.slow
def test_a_wrong_answer_deleted_and_answered_again_is_counted(
    smoke_raw_run: Path, copy_run: Callable[[Path], Path]
) -> None:
    """bench.run appends to the ledger; re-answering a question after a wrong outcome shows."""
    from tests.support.e2e_support import SMOKE_RAW, run_cli

    out = copy_run(smoke_raw_run)  # the shared run of SMOKE_RAW (tests/conftest.py)
    args = (*SMOKE_RAW, f"out={out}")
    assert "rerun-by-outcome" not in codes(out)
    wrong = next(
        p
        for p in sorted((out / "questions").glob("*.json"))
        if json.loads(p.read_text())["arms"]["raw"]["correct"] is False
    )
    wrong.unlink()
    assert run_cli(*args).returncode == 0
    assert codes(out)["rerun-by-outcome"] == ()  # raw, the run's only arm: the whole run
    lines = (out / LEDGER_FILE).read_text().splitlines()
    assert len(lines) == 17 and json.loads(lines[-1])["action"] == "answer"


def _stub_model(gold: dict[str, str]) -> Callable[[dict[str, Any]], str]:
    """Answerer and Mem0's judge in one stub: answers two questions in three with the gold
    (the rest "not mentioned"); judges CORRECT iff the answer is the gold, word for word."""

    def reply(body: dict[str, Any]) -> str:
        text = str(body["messages"][-1]["content"])
        if "Generated answer:" in text:
            said = re.findall(r"Generated answer: (.*)", text)[-1].strip().lower()
            right = re.findall(r"Gold answer: (.*)", text)[-1].strip().lower()
            return json.dumps({"label": "CORRECT" if said == right else "WRONG"})
        question = next((q for q in gold if q in text), "")
        digest = int(hashlib.sha256(question.encode()).hexdigest(), 16)
        return gold[question] if question and digest % 3 else "not mentioned"

    return reply


@pytest.mark.slow
def test_a_clean_stub_judged_run_with_a_calibration_is_publishable(tmp_path: Path) -> None:
    """LoCoMo in full, rag answered by a stub, Mem0's official judge (gpt-4o-mini) on the
    stub, then `bench.calibrate` into the run: nothing stands against it (about 4 min).

    The one reason the environment can add is `dirty-tree` (a checkout with uncommitted
    changes writes `git_dirty` into every record); a clean checkout has none.
    """
    from tests.support.e2e_support import run_cli
    from tests.support.judge_stub import JudgeStub, shared_data_dir

    data = shared_data_dir()
    if data is None or not (data / "locomo10.json").is_file():
        pytest.skip("LoCoMo is not in the shared data folder")
    gold = {
        qa["question"].strip(): str(qa["answer"])
        for conv in json.loads((data / "locomo10.json").read_text())
        for qa in conv["qa"]
        if "answer" in qa
    }
    out, env = tmp_path / "run", {"BENCH_DATA_DIR": str(data), "OPENAI_API_KEY": "sk-fake-38"}
    with JudgeStub(_stub_model(gold)) as stub:
        url = stub.base_url
        judge = [
            "dataset=locomo",
            "judge=mem0_locomo",
            f"judges.0.endpoint.base_url={url}",
            "judges.0.endpoint.api_key_env=null",
        ]
        run = run_cli(
            *judge,
            f"out={out}",
            "progress=false",
            "provider=openai",
            "arms=[rag]",
            "workers=2",
            f"provider.answerer.base_url={stub.base_url}",
            "provider.answerer.model=stub",
            "provider.answerer.json_schema=false",
            "provider.embedder.kind=wordllama",
            "provider.embedder.model=wordllama/l2_supercat_256",
            "provider.embedder.dim=256",
            env=env,
            timeout=900,
        )
        assert run.returncode == 0, run.stderr[-2000:]
        calibrate = run_cli(
            *judge,
            f"calibrate.out={out}",
            "calibrate.max_items=40",
            module="bench.calibrate",
            env=env,
            timeout=300,
        )
        assert calibrate.returncode == 0, calibrate.stderr[-2000:]
    summary = summarise_run(out)
    assert {r.code for r in summary.verdict.reasons} <= {"dirty-tree"}, summary.verdict.lines()
    if not summary.verdict.reasons:
        assert render_markdown(summary).splitlines()[1] == "> **publishable: true**"
