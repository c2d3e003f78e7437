"""Schema-constrained extraction and judging, short answers, and prompts that fit.

Real runs through `python -m bench.run` (and provider calls) against the fault server on
127.0.0.1, which honours `response_format: json_schema`, `max_tokens` and `stop`, and
emulates a server ignoring `tools`, prose verdicts, llama.cpp `/props`, vLLM
`/v1/models` and context-overflow errors with each server's wording.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.errors import ProviderError
from bench.providers.base import CallOptions
from bench.providers.context_window import probe
from tests.support.e2e_support import load_records, run_cli
from tests.support.fault_clients import quick_chat
from tests.support.fault_server import (
    LLAMACPP_KV_FULL,
    LLAMACPP_OVERFLOW,
    VLLM_OVERFLOW,
    Fault,
    FaultServer,
)

ENV = {"OPENAI_API_KEY": "sk-fake-structured-1a2b3c4d"}


def overrides(base_url: str, out: Path, *extra: str) -> list[str]:
    """The smoke run on the fault server (openai profile: json_schema=true)."""
    return [
        "dataset=smoke",
        f"out={out}",
        "progress=false",
        "provider=openai",
        f"provider.answerer.base_url={base_url}",
        "provider.answerer.max_attempts=2",
        "provider.embedder.kind=wordllama",
        "provider.embedder.model=wordllama/l2_supercat_256",
        "provider.embedder.dim=256",
        *extra,
    ]


def run_json(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "run.json").read_text())  # type: ignore[no-any-return]


def _run_on_a_server_ignoring_tools(tmp_path: Path, lanes: int) -> list[Any]:
    """The neuromorphic smoke run (exit 0) on a server that ignores tools; its extraction calls."""
    with FaultServer() as server:
        server.ignore_tools()
        extra = ("arms=[neuromorphic]", f"provider.extractor.concurrency={lanes}")
        proc = run_cli(*overrides(server.base_url, tmp_path / "run", *extra), env=ENV)
        extraction = [r for r in server.requests if "update_memory" in r.tools or r.schema]
    assert proc.returncode == 0, proc.stderr[-2000:]
    return extraction


@pytest.mark.slow
def test_ignored_tools_switch_the_run_to_the_schema(tmp_path: Path) -> None:
    # one lane: units side by side would each send their first exchange with tools
    # before either learns the server ignores them (one switch per lane, `bench.run.lanes`)
    extraction = _run_on_a_server_ignoring_tools(tmp_path, lanes=1)
    assert "ignored tools" in (tmp_path / "run" / "run.log").read_text()
    # one tool request was answered in prose; from then on only schema requests
    assert [bool(r.tools) for r in extraction][:2] == [True, False]
    assert sum(bool(r.tools) for r in extraction) == 1
    assert all(r.schema == "update_memory" for r in extraction[1:])
    health = run_json(tmp_path / "run")["extraction_health"]["neuromorphic"]
    total = {k: sum(row.get(k, 0) for row in health.values()) for k in next(iter(health.values()))}
    assert total["tools_ignored"] == 1 and total["via_tools"] == 0
    assert total["via_json_schema"] == total["exchanges"] and total["failed"] == 0
    assert total["facts"] > 0
    summary = run_cli(str(tmp_path / "run"), module="bench.summarise")
    assert "via json_schema (tools ignored 1×)" in summary.stdout


@pytest.mark.slow
def test_each_lane_switches_to_the_schema_once(tmp_path: Path) -> None:
    """Two conversations side by side: each lane's extractor learns once, then only schemas."""
    extraction = _run_on_a_server_ignoring_tools(tmp_path, lanes=2)
    health = run_json(tmp_path / "run")["extraction_health"]["neuromorphic"]
    ignored = sum(row.get("tools_ignored", 0) for row in health.values())
    assert 1 <= ignored <= 2 and sum(bool(r.tools) for r in extraction) == ignored
    assert sum(row.get("failed", 0) for row in health.values()) == 0


@pytest.mark.slow
def test_schema_mode_caps_each_extraction(tmp_path: Path) -> None:
    extra = ("arms=[neuromorphic]", "provider.extractor.extract_mode=json_schema")
    with FaultServer() as server:
        proc = run_cli(*overrides(server.base_url, tmp_path / "run", *extra), env=ENV)
        extraction = [r for r in server.requests if r.schema == "update_memory"]
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert extraction and not any(r.tools for r in extraction)
    caps = [r.max_tokens or 0 for r in extraction]
    assert max(caps) < 1024 and min(caps) > 256  # sized per exchange, below the ceiling
    assert len(set(caps)) > 1
    health = run_json(tmp_path / "run")["extraction_health"]["neuromorphic"]
    assert all(row["via_json_schema"] == row["exchanges"] for row in health.values())


def test_schema_mode_needs_a_server_that_honours_it(tmp_path: Path) -> None:
    extra = (
        "arms=[neuromorphic]",
        "provider.extractor.extract_mode=json_schema",
        "provider.answerer.json_schema=false",
    )
    proc = run_cli(*overrides("http://127.0.0.1:9/v1", tmp_path / "run", *extra), env=ENV)
    assert proc.returncode == 2
    assert "provider.extractor.json_schema=true" in proc.stderr.strip().splitlines()[-1]


@pytest.mark.slow
def test_prose_verdicts_become_unparseable_and_are_not_asked_again(tmp_path: Path) -> None:
    extra = (
        "arms=[raw]",
        "judge=llm",
        "limit.conversations=1",
        "limit.questions=3",
        "provider.answerer.json_schema=false",
    )
    with FaultServer() as server:
        server.garbage_verdicts()
        first = run_cli(*overrides(server.base_url, tmp_path / "run", *extra), env=ENV)
        asked = len(server.requests)
        server.clear_log()
        again = run_cli(*overrides(server.base_url, tmp_path / "run", *extra), env=ENV)
        rerun_requests = len(server.requests)
        server.clear_log()
        rejudged = run_cli(
            *overrides(server.base_url, tmp_path / "run", *extra, "scoring.rejudge=true"), env=ENV
        )
        rejudge_requests = len(server.requests)
    assert first.returncode == 1, first.stderr[-2000:]  # a missing verdict is no success
    assert "0 judge errors, 3 unparseable verdicts" in first.stderr
    assert "error: 3 verdicts missing (0 judge errors, 3 unparseable)" in first.stderr
    assert asked == 3 + 3 * 2  # three answers, two asks per verdict
    for record in load_records(tmp_path / "run").values():
        verdict = record["arms"]["raw"]["judgements"]["llm"]
        assert (verdict["status"], verdict["attempts"]) == ("unparseable", 2)
        assert record["arms"]["raw"]["correct"] is None  # no outcome, never "wrong"
    assert "0 records written" in again.stderr and rerun_requests == 0
    assert again.returncode == 1 and "3 verdicts missing" in again.stderr  # still missing
    assert rejudged.returncode == 1 and rejudge_requests == 3 * 2
    summary = run_cli(str(tmp_path / "run"), module="bench.summarise")
    assert "unparseable verdicts raw: 3" in summary.stdout
    opening = summary.stdout.splitlines()[1]  # under the title: the count, first thing read
    assert "judge llm: missing verdicts — 3 of 3 verdicts missing" in opening


def test_schema_constrained_verdicts_parse(tmp_path: Path) -> None:
    extra = ("arms=[raw]", "judge=llm", "limit.conversations=1", "limit.questions=3")
    with FaultServer() as server:
        server.garbage_verdicts()  # prose unless constrained: the schema makes them parse
        proc = run_cli(*overrides(server.base_url, tmp_path / "run", *extra), env=ENV)
        judged = [r for r in server.requests if r.schema == "verdict"]
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "0 judge errors, 0 unparseable verdicts" in proc.stderr and len(judged) == 3
    for record in load_records(tmp_path / "run").values():
        assert record["arms"]["raw"]["judgements"]["llm"]["status"] == "ok"


@pytest.mark.slow
def test_answers_are_capped_stopped_and_flagged(tmp_path: Path) -> None:
    def ramble(messages: list[dict[str, Any]]) -> str:
        question = str(messages[-1]["content"])
        return "The answer " + "is long " * 60 if "When" in question else "7 May 2023\n\nbecause"

    with FaultServer(chat_fn=ramble) as server:
        proc = run_cli(*overrides(server.base_url, tmp_path / "run", "arms=[rag]"), env=ENV)
        answers = [r for r in server.requests if r.path.endswith("/chat/completions")]
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert all(r.max_tokens == 64 and r.stop == ("\n\n",) for r in answers)
    records = load_records(tmp_path / "run").values()
    flags = {r["question"].startswith("When"): r["arms"]["rag"].get("truncated") for r in records}
    assert flags == {True: True, False: None}
    capped = sum(r["question"].startswith("When") for r in records)
    summary = run_cli(str(tmp_path / "run"), module="bench.summarise")
    assert f"truncated answers rag: {capped} of {len(records)}" in summary.stdout


@pytest.mark.parametrize("style", ["llamacpp", "vllm"])
def test_probe_reads_the_context_per_request(style: str) -> None:
    with FaultServer() as server:
        server.serve_context(style, 32768, slots=2)
        found = probe(server.base_url, "test-model", None)
        gets = server.gets
    assert found is not None and found.tokens == 32768
    assert gets == (["/props"] if style == "llamacpp" else ["/props", "/v1/models"])
    assert found.slots == (2 if style == "llamacpp" else None)


def test_probe_of_a_server_that_reports_nothing_is_none() -> None:
    with FaultServer() as server:
        assert probe(server.base_url, "test-model", None) is None


def test_raw_prompt_over_the_slot_is_refused_up_front(tmp_path: Path) -> None:
    with FaultServer() as server:
        server.serve_context("llamacpp", 16384, slots=1)
        proc = run_cli(*overrides(server.base_url, tmp_path / "run", "arms=[raw]"), env=ENV)
        chats = [r for r in server.requests if r.path.endswith("/chat/completions")]
    assert proc.returncode == 2 and not chats
    line = proc.stderr.strip().splitlines()[-1]
    assert line.startswith("error: answer.max_context_tokens=120000: the prompt can reach")
    assert "16384-token context per request (llama.cpp /props, 1 slots" in line
    assert "answer.truncate_to_fit=true" in line


def test_truncate_to_fit_lowers_the_budget_visibly(tmp_path: Path) -> None:
    extra = ("arms=[raw]", "answer.truncate_to_fit=true", "limit.conversations=1")
    with FaultServer() as server:
        server.serve_context("vllm", 1024)
        proc = run_cli(*overrides(server.base_url, tmp_path / "run", *extra), env=ENV)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "context budget lowered from 120000 to" in (tmp_path / "run" / "run.log").read_text()
    config = run_json(tmp_path / "run")["config"]
    assert config["provider"]["context_tokens"] == 1024
    assert config["answer"]["max_context_tokens"] < 1024
    for record in load_records(tmp_path / "run").values():
        raw = record["arms"]["raw"]
        assert raw["context_truncated"] is True
        assert raw["context_tokens"] <= config["answer"]["max_context_tokens"]


def test_a_prompt_that_cannot_fit_is_not_sent(tmp_path: Path) -> None:
    from bench.answer.answer_prompt import load_answer_prompt
    from bench.answer.answer_step import AnswerStep
    from bench.tokens import TokenCounter
    from bench.types import Context, Question

    question = Question("c:1", "c", "When?", 2, "7 May 2023")
    context = Context(text="Caroline went to the park on 7 May 2023. " * 300)
    with FaultServer() as server:
        step = AnswerStep(
            prompt=load_answer_prompt("conf/prompts/answer_v2.txt"),
            answerer=quick_chat(server.base_url),
            tokens=TokenCounter(),
            f1_threshold=0.5,
            options=CallOptions(max_tokens=64),
            window=1024,
        )
        with pytest.raises(ProviderError, match="context overflow, not sent"):
            step.answer(question, context, 0.0)
        assert not server.requests
        fitted = AnswerStep(**{**step.__dict__, "truncate_to_fit": True}).answer(
            question, context, 0.0
        )
    assert fitted.context_truncated and (fitted.context_cut_tokens or 0) > 0
    assert (fitted.context_tokens or 0) + 64 <= 1024


@pytest.mark.parametrize(
    ("status", "message"),
    [(400, LLAMACPP_OVERFLOW), (500, LLAMACPP_KV_FULL), (400, VLLM_OVERFLOW)],
)
def test_context_overflow_is_never_retried(status: int, message: str) -> None:
    with FaultServer() as server:
        server.always(Fault.http(status, message=message))
        chat = quick_chat(server.base_url, max_attempts=6)
        with pytest.raises(ProviderError, match="context overflow") as caught:
            chat.complete([{"role": "user", "content": "hi"}])
        assert len(server.requests) == 1
    assert "answer.max_context_tokens" in str(caught.value)


def test_the_ignored_tools_warning_is_logged_once_per_run(caplog: pytest.LogCaptureFixture) -> None:
    """Every arm and lane has its own extractor: four warnings per run before (issue 41)."""
    from arms.neuromorphic.exchange import Exchange
    from arms.neuromorphic.extract_llm import LLMExtractor
    from bench.types import Turn
    from tests.support.fault_clients import quick_chat

    exchange = Exchange(1, "1:56 pm on 8 May, 2023", (Turn("Ann", "I moved to Berlin", "D1:1", 1),))
    with FaultServer() as server:
        server.ignore_tools()
        for _ in range(3):  # three arms' (or lanes') extractors on one model
            chat = quick_chat(
                server.base_url, role="extractor", model="once-model", json_schema=True
            )
            assert LLMExtractor(chat).extract(exchange, []).tools_ignored
    warned = [r for r in caplog.records if "ignored tools" in r.getMessage()]
    assert len(warned) == 1 and "once-model" in warned[0].getMessage()
