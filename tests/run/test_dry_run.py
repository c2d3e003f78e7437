"""`dry_run=true` through the fault server: no request, no record, exact request counts.

The dry run is compared with a real run of the same smoke configuration against the
same local server: its request count and prompt tokens per role (answerer, extractor,
embedder, judge) must equal what the server answered and what the run's tokenizer counts
in the bodies the server received, its completion bound cover what the server
returned, and a second dry run over the finished run's cache must find every answer
already cached.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bench.tokens import TokenCounter
from tests.run.test_fault_e2e import ENV, smoke_overrides
from tests.support.e2e_support import ROOT, run_cli
from tests.support.fault_server import FaultServer
from tests.support.judge_stub import shared_data_dir

ROW = re.compile(
    r"^\s+\S+\s+(?P<role>\S+)\s+.*?: (?P<requests>\d+) requests \((?P<cached>\d+) already "
    r"cached, not counted\), (?P<prompt>\d+) prompt tokens, <= (?P<completion>\d+) completion"
)


def estimate(stdout: str) -> dict[str, dict[str, int]]:
    """The dry run's printed rows by role."""
    rows = {}
    for line in stdout.splitlines():
        if m := ROW.match(line):
            rows[m["role"]] = {k: int(m[k]) for k in ("requests", "cached", "prompt", "completion")}
    return rows


def overrides(base_url: str, out: Path, *extra: str) -> list[str]:
    """The fault-e2e smoke run with generous timeouts: a timed-out retry is not foreseeable."""
    kept = [o for o in smoke_overrides(base_url, out) if ".timeout_s=" not in o]
    return [*kept, "provider.answerer.timeout_s=60", "provider.embedder.timeout_s=60", *extra]


@pytest.fixture(scope="module")
def server():
    with FaultServer() as srv:
        yield srv


@pytest.mark.slow
def test_dry_run_estimate_matches_what_the_server_saw(
    server: FaultServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    out = tmp_path / "run"
    server.clear_log()
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # the dry run needs no key
    dry = run_cli(*overrides(server.base_url, out, "dry_run=true"))
    assert dry.returncode == 0, dry.stderr[-3000:]
    assert server.requests == []  # not one call
    assert not (out / "questions").exists() and not (out / "run.json").exists()
    rows = estimate(dry.stdout)
    assert {"answerer", "judge:llm", "embedder"} <= set(rows), dry.stdout
    written = json.loads((out / "dry_run.json").read_text())
    assert {r: v["requests"] for r, v in written["roles"].items()} == {
        r: v["requests"] for r, v in rows.items()
    }
    total = written["total"]
    assert total["requests"] == sum(v["requests"] for v in rows.values())
    assert total["chat_requests"] == total["requests"] - rows["embedder"]["requests"]

    real = run_cli(*overrides(server.base_url, out), env=ENV)
    assert real.returncode == 0, real.stderr[-3000:]
    chat = server.chat_usage()
    sent = served_by_role(server)
    # Every role's count equals what the stub answered: the answers are simulated by the
    # offline answerer and the extractor's facts by the rule extractor, which is how this
    # stub replies, so judge prompts and fact embeddings are the run's own.
    assert {r: v["requests"] for r, v in rows.items()} == {r: n for r, (n, _) in sent.items()}
    assert total["chat_requests"] == chat.requests
    assert total["requests"] == chat.requests + server.embedding_usage().requests
    # Prompt tokens: the run's tokenizer over the bodies the server received.
    assert {r: v["prompt"] for r, v in rows.items()} == {r: t for r, (_, t) in sent.items()}
    est_chat = [r for role, r in rows.items() if role != "embedder"]
    assert sum(r["completion"] for r in est_chat) >= chat.completion_tokens

    again = run_cli(*overrides(server.base_url, out, "dry_run=true"), env=ENV)
    assert again.returncode == 0, again.stderr[-3000:]
    after, before = estimate(again.stdout)["answerer"], rows["answerer"]
    # The finished run's cache answers every answer request the dry run would make.
    assert (after["cached"], after["requests"]) == (before["requests"], 0)


def served_by_role(server: FaultServer) -> dict[str, tuple[int, int]]:
    """Requests the stub answered and their prompt tokens (the run's tokenizer on every
    message's content, or every input text), by the dry run's role names."""
    counts: dict[str, tuple[int, int]] = {}
    tokens = TokenCounter()
    for r in server.requests:
        body = r.body or {}
        if r.fault:
            continue
        if "embeddings" in r.path:
            role, texts = "embedder", list(body["input"])
        else:
            texts = [str(m.get("content") or "") for m in body["messages"]]
            if "update_memory" in r.tools or r.schema not in (None, "verdict"):
                role = "extractor"
            else:
                role = "judge:llm" if r.schema == "verdict" else "answerer"
        n, t = counts.get(role, (0, 0))
        counts[role] = (n + 1, t + sum(tokens.count(x) for x in texts))
    return counts


@pytest.mark.slow
def test_offline_dry_run_says_there_is_nothing_to_send(tmp_path: Path):
    out = tmp_path / "run"
    proc = run_cli("dataset=smoke", f"out={out}", "progress=false", "dry_run=true")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "every role is offline: no requests, no cost" in proc.stdout
    assert not (out / "questions").exists() and not (out / "run.json").exists()


@pytest.mark.slow
def test_dry_run_needs_no_key_loads_no_model_and_names_unknown_prices(tmp_path: Path):
    """`provider=openai judge=llm` (a 1536-dimension embedder, no WordLlama weights of that
    size) with no key set: the estimate is printed and written; unpriced roles make the
    total's cost unknown instead of silently short."""
    out = tmp_path / "run"
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.run",
            "dataset=smoke",
            "provider=openai",
            "judge=llm",
            "dry_run=true",
            f"out={out}",
            "progress=false",
            "limit.conversations=1",
        ],
        cwd=ROOT,
        env={**env, "HYDRA_FULL_ERROR": "0"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    written = json.loads((out / "dry_run.json").read_text())
    assert written["roles"]["embedder"]["model"] == "text-embedding-3-small"
    total = written["total"]
    assert total["chat_requests"] > 0 and total["requests"] > total["chat_requests"]
    assert total["cost"] is None and "judge:llm" in total["unpriced_roles"]
    assert total["priced_cost"] > 0  # the answerer's price is configured
    last_total = [line for line in proc.stdout.splitlines() if "total:" in line][-1]
    assert "+ unknown (" in last_total and "judge:llm" in last_total
    assert not (out / "questions").exists() and not (out / "run.json").exists()


def test_offline_vectors_fit_any_dimension() -> None:
    from bench.run.dry_recorders import fit_dim

    rows = np.array([[0.6, 0.8, 0.0], [0.0, 0.0, 0.0]], dtype=np.float32)
    wide = fit_dim(rows, 5)
    assert wide.shape == (2, 5) and float(wide[0] @ wide[0]) == pytest.approx(1.0)
    narrow = fit_dim(rows, 1)
    assert narrow.tolist() == [[1.0], [0.0]]  # cut, renormalised; a zero row stays zero


PRICED = (
    "provider.embedder.price_prompt_per_1k=0.00002",
    "judges.0.endpoint.price_prompt_per_1k=0.00015",
)


@pytest.mark.slow
@pytest.mark.parametrize("dry", [True, False], ids=["dry_run", "run"])
def test_a_run_over_budget_max_usd_is_refused_before_any_call(tmp_path: Path, dry: bool):
    """The cap is checked on the estimate: over it (or with an unpriced role) is one line,
    exit 2, and the real run sends nothing and writes no record."""
    out = tmp_path / "run"
    base = [
        "dataset=smoke",
        "provider=openai",
        "judge=llm",
        f"out={out}",
        "progress=false",
        "limit.conversations=1",
        *(["dry_run=true"] if dry else []),
    ]
    over = run_cli(*base, *PRICED, "budget.max_usd=0.001", env=ENV)
    assert over.returncode == 2, over.stderr[-2000:]
    line = over.stderr.strip().splitlines()[-1]
    assert line.startswith("error: budget.max_usd=0.001: the estimate is $")
    unpriced = run_cli(*base, "budget.max_usd=100", env=ENV)
    assert unpriced.returncode == 2
    assert "cannot check it, embedder, judge:llm have no price" in unpriced.stderr
    assert not (out / "questions").exists() and not (out / "run.json").exists()


def test_an_offline_run_is_within_any_budget(tmp_path: Path):
    out = tmp_path / "run"
    proc = run_cli(
        "dataset=smoke",
        "arms=[raw]",
        f"out={out}",
        "progress=false",
        "limit.conversations=1",
        "budget.max_usd=0",
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert any((out / "questions").glob("*.json"))


@pytest.mark.slow  # a smoke dry run with the in-process engine standing in (~10 s)
def test_dry_run_reaches_no_live_service(tmp_path: Path):
    """Issue 40, defect 5: no health check, no create, no token for an http service, and
    no MCP stdio server started; the engine stands in and the estimate says so."""
    from tests.support.hostile_service import HostileService

    out, pidfile = tmp_path / "run", tmp_path / "mcp.pid"
    with HostileService() as service:
        proc = run_cli(
            "dataset=smoke",
            f"out={out}",
            "progress=false",
            "dry_run=true",
            "arms=[raw,http,mcp]",
            f"arm_options.http.base_url={service.url}",
            "arm_options.http.token_env=ARMBENCH_DRY_TOKEN",
            "arm_options.mcp.url=null",
            f"arm_options.mcp.command=[python,tests/support/hostile_mcp.py,{pidfile},hang]",
            env={"ARMBENCH_DRY_TOKEN": "dry-run-token-8c1f"},
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert service.log == [] and service.headers == []  # not one request reached it
    assert not pidfile.exists()  # the MCP stdio server was never started
    notes = json.loads((out / "dry_run.json").read_text())["notes"]
    assert [n.split(" (")[0] for n in notes] == ["arm http", "arm mcp"]
    assert "note: arm http (http) is a live memory service, not contacted" in proc.stdout
    assert not (out / "state.json").exists() and not (out / "questions").exists()


def _distinct_answers(messages: list[dict[str, Any]]) -> str:
    """Every prompt its own answer: no two arms' answers (so judge prompts) coincide."""
    digest = hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest()
    return f"answer {digest[:10]}"


def _by_model(server: FaultServer) -> dict[str, int]:
    """Requests the stub answered per role, told apart by the model each role names."""
    counts: dict[str, int] = {}
    for r in server.requests:
        role = (
            "embedder"
            if "embeddings" in r.path
            else {"ans-model": "answerer"}.get(r.model, "judge")
        )
        counts[role] = counts.get(role, 0) + 1
    return counts


DATA = shared_data_dir()
RANGE_CASES = {
    "smoke": ("dataset=smoke", "judge=llm"),
    "locomo-1-conversation": (
        "dataset=locomo",
        f"dataset.path={DATA and DATA / 'locomo10.json'}",
        "limit.conversations=1",
        "limit.per_conversation=12",
        "judge=llm",
    ),
    "longmemeval-4-questions-3-judge-runs": (
        "dataset=longmemeval",
        f"dataset.path={DATA and DATA / 'longmemeval-s-subset16.json'}",
        "limit.questions=4",
        "judge=longmemeval_official",
        "judges.0.runs=3",
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(RANGE_CASES))
def test_the_dry_run_range_holds_what_a_run_with_differing_answers_sends(
    tmp_path: Path, case: str
) -> None:
    """Per role, low <= sent <= high, when arms' answers all differ (issue 41, item 7)."""
    if case != "smoke" and DATA is None:
        pytest.skip("shared data (locomo10.json, longmemeval-s-subset16.json) not present")
    with FaultServer(chat_fn=_distinct_answers) as stub:
        args = [
            *RANGE_CASES[case],
            "arms=[raw,rag]",
            "progress=false",
            "provider=openai",
            f"provider.answerer.base_url={stub.base_url}",
            "provider.answerer.model=ans-model",
            f"provider.embedder.base_url={stub.base_url}",
            "provider.embedder.model=fault-wl",
            "provider.embedder.dim=256",
            f"judges.0.endpoint.base_url={stub.base_url}",
            "judges.0.endpoint.model=judge-model",
        ]
        dry = run_cli(*args, f"out={tmp_path / 'run'}", "dry_run=true", env=ENV)
        assert dry.returncode == 0, dry.stderr[-3000:]
        real = run_cli(*args, f"out={tmp_path / 'run'}", env=ENV)
        assert real.returncode in (0, 1), real.stderr[-3000:]  # 1: a verdict may be missing
        sent, probes = _by_model(stub), len(stub.gets)
    estimate = json.loads((tmp_path / "run" / "dry_run.json").read_text())
    roles = {
        ("judge" if r.startswith("judge") else r): v
        for r, v in estimate["roles"].items()
        if v["requests_high"]  # an extractor no arm of these uses: nothing to send
    }
    assert set(roles) == set(sent), (roles, sent)
    for role, n in sent.items():
        low, high = roles[role]["requests_low"], roles[role]["requests_high"]
        assert low <= n <= high, (role, low, n, high)
    assert roles["judge"]["requests_low"] < roles["judge"]["requests_high"]  # a real range
    low, high = estimate["total"]["probes"]
    assert low <= probes <= high, (low, probes, high)
