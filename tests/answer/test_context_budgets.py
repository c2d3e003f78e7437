"""Context budgets: the cut rule (bench/context_budget.py) and `context_budgets=[...]` runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from bench.context_budget import cut_context
from bench.records import ArmResult, BudgetResult, QuestionRecord, read_record, write_record
from bench.run.budgets import pending
from bench.tokens import TokenCounter
from bench.types import Context, ContextItem
from tests.support.e2e_support import load_records, run_cli, strip_timings

TOKENS = TokenCounter()
ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "bench/schema/question_record.schema.json").read_text())


def _chunks(n: int) -> tuple[ContextItem, ...]:
    return tuple(
        ContextItem(
            f"[Session {i}]\nchunk {i} says " + "word " * 20 + f"end{i}",
            1 / (i + 1),
            (f"D{i}:1",),
            "chunk",
        )
        for i in range(n)
    )


def test_a_context_within_the_budget_is_kept_whole() -> None:
    context = Context("A: hello there", meta={"whole_transcript": True})
    assert cut_context(context, 50, TOKENS) is context


def test_a_whole_context_arm_keeps_its_most_recent_tokens() -> None:
    text = "\n".join(f"A: line {i} about the cat" for i in range(100))
    got = cut_context(Context(text, meta={"whole_transcript": True}), 40, TOKENS)
    assert got.truncated and text.endswith(got.text)
    assert TOKENS.count(got.text) <= 40
    assert got.text.endswith("A: line 99 about the cat")
    # as raw's own rule (TokenCounter.truncate_left) cuts it, give or take a token
    same, _ = TOKENS.truncate_left(text, 40)
    assert same.endswith(got.text) or got.text.endswith(same)


def test_a_ranked_arm_keeps_whole_items_in_rank_order_and_cuts_the_last() -> None:
    items = _chunks(5)
    text = "\n\n".join(i.text for i in items)
    one = TOKENS.count(items[0].text)
    got = cut_context(Context(text, items), 2 * one + 10, TOKENS)
    assert got.text.startswith(items[0].text + "\n\n" + items[1].text + "\n\n")
    assert items[2].text.startswith(got.text.split("\n\n")[2])  # the third, cut
    assert "end2" not in got.text and "chunk 3" not in got.text
    assert TOKENS.count(got.text) <= 2 * one + 10


def test_an_arm_shown_in_time_order_is_cut_by_rank_then_shown_in_its_order() -> None:
    items = _chunks(4)
    shown = "\n\n".join(i.text for i in reversed(items))  # display order ≠ rank order
    one = TOKENS.count(items[0].text)
    got = cut_context(Context(shown, items), 2 * one + 2, TOKENS)
    assert got.text == items[1].text + "\n\n" + items[0].text  # best two, display order
    assert TOKENS.count(got.text) <= 2 * one + 2


def test_a_service_rendered_text_is_cut_from_its_start() -> None:
    """A live arm whose service renders its own text: the text the answerer sees is cut."""
    items = (ContextItem("fact one", 1.0, ("D1:1",)), ContextItem("fact two", 0.5))
    text = "Memories:\n" + "\n".join(f"* {w} remembered" for w in ("alpha", "beta") * 30)
    got = cut_context(Context(text, items, write_path="remember"), 20, TOKENS)
    assert text.startswith(got.text) and TOKENS.count(got.text) <= 20
    assert got.write_path == "remember"


@pytest.mark.parametrize("budget", [1, 7, 33, 100])
def test_no_cut_counts_more_than_its_budget(budget: int) -> None:
    text = "\n".join(f"Caroline: I went to the {w} yesterday!" for w in ("park", "zoo") * 40)
    for context in (Context(text), Context(text, _chunks(6))):
        assert TOKENS.count(cut_context(context, budget, TOKENS).text) <= budget


def test_budgets_round_trip_and_validate_and_are_absent_by_default(tmp_path: Path) -> None:
    result = ArmResult("ok", "x", True, context_tokens=9)
    plain = QuestionRecord("c:0", "locomo", "c", 1, "q?", "a", [], {"raw": result})
    assert "budgets" not in plain.to_json()["arms"]["raw"]
    result.budgets = [BudgetResult(256, "ok", "y", False, 250, True)]
    path = write_record(tmp_path, "c_0", plain)
    data = json.loads(path.read_text())
    jsonschema.validate(data, SCHEMA)
    assert read_record(path).arms["raw"].budgets == result.budgets
    data["arms"]["raw"]["budgets"][0]["context_tokens"] = "many"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="context_tokens"):
        read_record(path)


def test_pending_until_every_budget_is_ok() -> None:
    result = ArmResult("ok", "x", True, budgets=[BudgetResult(256, "ok", "y", True, 200)])
    assert not pending(result, (256,), ())
    assert pending(result, (256, 512), ())
    result.budgets.append(BudgetResult(512, "error", error="Timeout"))
    assert pending(result, (256, 512), ())
    assert not pending(ArmResult.failed("x"), (256,), ())  # the arm itself is redone


def test_bad_budgets_are_one_error_line(tmp_path: Path) -> None:
    for bad in ("[0]", "[256,256]", "[abc]"):
        proc = run_cli(
            "dataset=smoke", f"out={tmp_path / 'x'}", "progress=false", f"context_budgets={bad}"
        )
        assert proc.returncode == 2, proc.stderr[-500:]
        assert "Traceback" not in proc.stderr
        assert proc.stderr.strip().splitlines()[-1].startswith("error: ")


def _view(out: Path) -> dict[str, dict[str, Any]]:
    return {q: strip_timings(r) for q, r in load_records(out).items()}


@pytest.mark.slow
def test_a_run_grown_budget_by_budget_equals_a_straight_one(tmp_path: Path) -> None:
    """Resume continues per budget: a plain run, then [64], then [64,256] equals [64,256]."""
    base = ("dataset=smoke", "progress=false", "limit.per_conversation=3", "arms=[raw,rag]")
    straight, grown = tmp_path / "straight", tmp_path / "grown"
    assert run_cli(*base, f"out={straight}", "context_budgets=[64,256]").returncode == 0
    for budgets in ("[]", "[64]", "[256,64]"):
        proc = run_cli(*base, f"out={grown}", f"context_budgets={budgets}")
        assert proc.returncode == 0, proc.stderr[-2000:]
        if budgets == "[]":
            plain = load_records(grown)
            assert all("budgets" not in r for rec in plain.values() for r in rec["arms"].values())
            shutil.copytree(grown, tmp_path / "plain")
    assert _view(grown) == _view(straight)
    # run.json: each unit's whole transcript, as raw (untruncated) counts its context
    sizes = json.loads((grown / "run.json").read_text())["conversation_tokens"]
    raw = {r["conversation_id"]: r["arms"]["raw"]["context_tokens"] for r in plain.values()}
    assert sizes == raw and len(sizes) == 2
    for record in load_records(straight).values():
        for result in record["arms"].values():
            assert [b["budget"] for b in result["budgets"]] == [64, 256]
            assert all(b["context_tokens"] <= b["budget"] for b in result["budgets"])


@pytest.mark.slow
def test_evaluate_adds_budgets_to_a_predicted_run(tmp_path: Path) -> None:
    """phase=evaluate answers budgets from the stored retrievals, as phase=all does."""
    base = ("dataset=smoke", "progress=false", "limit.questions=2", "arms=[raw,rag]")
    split, whole = tmp_path / "split", tmp_path / "whole"
    assert run_cli(*base, f"out={split}", "phase=predict").returncode == 0
    assert run_cli(*base, f"out={split}", "phase=evaluate").returncode == 0
    proc = run_cli(*base, f"out={split}", "phase=evaluate", "context_budgets=[64]")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert run_cli(*base, f"out={whole}", "context_budgets=[64]").returncode == 0
    assert _view(split) == _view(whole)  # timings and provenance aside


@pytest.mark.slow
def test_dry_run_counts_every_budgets_answers_and_verdicts(tmp_path: Path) -> None:
    """The dry run's counts with budgets equal what a real run sends, and are split per budget."""
    from tests.run.test_dry_run import estimate, overrides, served_by_role
    from tests.run.test_fault_e2e import ENV
    from tests.support.fault_server import FaultServer

    extra = ("arms=[raw,rag]", "limit.questions=2", "context_budgets=[64,256]")
    out = tmp_path / "run"
    with FaultServer() as server:
        dry = run_cli(*overrides(server.base_url, out, *extra, "dry_run=true"))
        assert dry.returncode == 0, dry.stderr[-3000:]
        assert server.requests == []
        rows = estimate(dry.stdout)
        real = run_cli(*overrides(server.base_url, out, *extra), env=ENV)
        assert real.returncode == 0, real.stderr[-3000:]
        sent = served_by_role(server)
    counted = {r: v["requests"] for r, v in rows.items() if v["requests"]}
    assert counted == {r: n for r, (n, _) in sent.items()}
    per_budget = json.loads((out / "dry_run.json").read_text())["budgets"]
    assert set(per_budget) == {"64", "256"}
    assert all(c["answerer"] > 0 and c["judge:llm"] > 0 for c in per_budget.values())
    assert "of which context budget 64: " in dry.stdout
    for record in load_records(out).values():
        for result in record["arms"].values():
            assert all("llm" in b["judgements"] for b in result["budgets"])


@pytest.mark.slow
def test_a_live_arm_is_cut_on_the_text_the_answerer_sees(tmp_path: Path) -> None:
    """The http arm at a budget: its service's text cut, answered by the harness (the
    service's own answer saw the uncut context), no extra call to the service."""
    import httpx

    from tests.support.live_server import reference_server

    with reference_server(tmp_path / "data") as url:
        proc = run_cli(
            "dataset=smoke",
            f"out={tmp_path / 'run'}",
            "progress=false",
            "arms=[http]",
            f"arm_options.http.base_url={url}",
            "arm_options.http.service_answer=true",
            "context_budgets=[64]",
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        calls = httpx.get(f"{url}/v1/stats", timeout=120).json()["calls"]
    assert calls["answer"] == 16 + 1  # every question and the probe: none per budget
    for record in load_records(tmp_path / "run").values():
        http = record["arms"]["http"]
        assert http["answer_path"] == "service"
        (at,) = http["budgets"]
        assert at["status"] == "ok" and at["context_tokens"] <= 64
        assert at["context_truncated"] == (http["context_tokens"] > 64)


def test_answer_budgets_reuses_finished_ones_and_keeps_those_no_longer_asked() -> None:
    from bench.answer.answer_prompt import load_answer_prompt
    from bench.answer.answer_step import AnswerStep
    from bench.providers.offline_answer import OfflineAnswerer
    from bench.run.budgets import answer_budgets
    from bench.types import Question

    step = AnswerStep(
        prompt=load_answer_prompt("conf/prompts/answer_v2.txt"),
        answerer=OfflineAnswerer(),
        tokens=TOKENS,
        f1_threshold=0.5,
        budgets=(64,),
    )
    question = Question("c:1", "c", "When did Caroline go to the park?", 2, "7 May 2023")
    context = Context("\n".join(["Caroline went to the park on 7 May 2023."] * 40))
    done = BudgetResult(256, "ok", "earlier", True, 250, True)
    failed = BudgetResult(64, "error", error="Timeout")
    got = answer_budgets(step, question, context, 0.0, [failed, done])
    assert [b.budget for b in got] == [64, 256]
    assert got[1] is done  # not asked now: kept as it was
    assert got[0].status == "ok" and got[0].answer and (got[0].context_tokens or 0) <= 64
