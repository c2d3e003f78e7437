"""A whole smoke run judged by a gpt-5-style model (the fault server's reasoning mode).

The judge endpoint is `reasoning: auto`: its first request is rejected (HTTP 400
`unsupported_parameter` for `max_tokens`), the run says so in one log line, and every
answer still gets a verdict; the reasoning tokens reach run.json's accounting.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.e2e_support import load_records, run_cli
from tests.support.fault_server import FaultServer

THOUGHT = 40


@pytest.mark.slow
def test_a_run_with_a_reasoning_judge_has_a_verdict_for_every_answer(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FaultServer() as server:
        server.reasoning_model(THOUGHT)
        proc = run_cli(
            "dataset=smoke",
            f"out={out}",
            "progress=false",
            "judge=llm",
            "judges.0.endpoint.kind=openai",
            f"judges.0.endpoint.base_url={server.base_url}",
            "judges.0.endpoint.model=gpt-5-stub",
            "judges.0.endpoint.reasoning=auto",
            "judges.0.endpoint.reasoning_effort=low",
            "judges.0.endpoint.max_completion_tokens=400",
        )
        requests = server.requests
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert sum("it is a reasoning model" in line for line in proc.stdout.splitlines()) == 1
    verdicts = [
        result["judgements"]["llm"]
        for record in load_records(out).values()
        for result in record["arms"].values()
    ]
    assert len(verdicts) == 64  # 16 questions x 4 arms
    assert all(v["status"] == "ok" and isinstance(v["verdict"], bool) for v in verdicts)
    assert [r.fault for r in requests] == ["unsupported_parameter"] + [None] * 64
    for request in requests[1:]:
        body = request.body or {}
        assert (body["max_completion_tokens"], body["reasoning_effort"]) == (400, "low")
        assert not {"temperature", "max_tokens", "stop"} & body.keys()
    judge = json.loads((out / "run.json").read_text())["accounting"]["roles"]["judge:llm"]
    assert (judge["calls"], judge["http_requests"], judge["errors"]) == (64, 65, 0)
    assert judge["reasoning_tokens"] == 64 * THOUGHT


@pytest.mark.slow
def test_the_dry_run_bounds_a_reasoning_judge_by_max_completion_tokens(tmp_path: Path) -> None:
    from tests.run.test_dry_run import estimate

    judge = [
        "judge=llm",
        "judges.0.endpoint.kind=openai",
        "judges.0.endpoint.model=gpt-5-stub",
        "judges.0.endpoint.base_url=http://127.0.0.1:9/v1",  # never called
    ]
    rows = {}
    for mode in ("false", "true"):
        proc = run_cli(
            "dataset=smoke",
            f"out={tmp_path / mode}",
            "progress=false",
            "dry_run=true",
            *judge,
            f"judges.0.endpoint.reasoning={mode}",
            "judges.0.endpoint.max_completion_tokens=1000",
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        rows[mode] = estimate(proc.stdout)["judge:llm"]
    n = rows["false"]["requests"]  # distinct judge prompts (placeholder answers repeat)
    assert n > 0 and rows["true"]["requests"] == n
    assert rows["false"]["completion"] == n * 128  # the judge's max_tokens
    assert rows["true"]["completion"] == n * 1000
