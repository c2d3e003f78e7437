"""A key echoed in a 200 reply is masked before anything stores it (issue 40, defect 4).

A hostile OpenAI-compatible server on 127.0.0.1 (`tests/support/judge_stub.py`, `echo_auth`)
puts the request's `Authorization` header into the text and the model name of every
successful reply. The key must appear nowhere: not in the answers, raw answers and
judge verdicts of the records, not in the response cache, not in the logs, not in what
the accounting proxy relays or caches.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.config import CacheConfig, EndpointConfig, ProviderConfig
from bench.providers.factory import build_providers
from tests.support.e2e_support import load_records, run_cli
from tests.support.judge_stub import JudgeStub

KEY = "echo-KEY-5d1c9e7a3b20f864-zq71x"
ENV = "ARMBENCH_TEST_ECHO_KEY"


def _echo(body: dict[str, Any]) -> str:
    """A judge-shaped prompt gets a JSON verdict whose reasoning holds the header."""
    prompt = " ".join(str(m.get("content")) for m in body["messages"])
    if "Gold answer" in prompt:
        return json.dumps({"reasoning": "header {auth} and key {auth}", "correct": True})
    return "Lisbon; you sent {auth}"


def _files_holding(root: Path, needle: str) -> list[str]:
    """Every file under `root` whose bytes contain the key or an 8-character end of it."""
    pieces = [needle.encode(), needle[:8].encode(), needle[-8:].encode()]
    return [
        str(path)
        for path in root.rglob("*")
        if path.is_file() and any(piece in path.read_bytes() for piece in pieces)
    ]


@pytest.mark.slow
def test_a_key_echoed_in_200_replies_reaches_no_record_cache_or_log(tmp_path: Path):
    out = tmp_path / "run"
    with JudgeStub(_echo, echo_auth=True) as server:
        proc = run_cli(
            "dataset=smoke",
            f"out={out}",
            "progress=false",
            "arms=[raw]",
            "limit.questions=2",
            "judge=llm",
            "provider.answerer.kind=openai",
            "provider.answerer.model=echo",
            f"provider.answerer.base_url={server.base_url}",
            f"provider.answerer.api_key_env={ENV}",
            "provider.answerer.json_schema=false",
            "provider.cache.mode=readwrite",
            env={ENV: KEY},
        )
        assert server.bodies, "the stub was never called"
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = [r for rec in load_records(out).values() for r in rec["arms"].values()]
    assert results and all(r["status"] == "ok" for r in results)
    assert all(r["raw_answer"] == "Lisbon; you sent Bearer ***" for r in results)
    raws = [j["raw"] for r in results for j in r["judgements"].values()]
    assert raws and all(json.loads(raw)["correct"] is True for raw in raws)  # still parses
    assert (out / "cache" / "responses.sqlite").is_file()
    assert _files_holding(out, KEY) == []  # records, run.json, cache, logs
    assert KEY not in proc.stdout + proc.stderr and KEY[-8:] not in proc.stderr


def test_the_proxy_relays_and_caches_no_echoed_key(monkeypatch, tmp_path: Path):
    monkeypatch.setenv(ENV, KEY)
    with JudgeStub(lambda body: "noted {auth}", echo_auth=True) as server:
        endpoint = EndpointConfig(
            kind="openai", model="m", base_url=server.base_url, api_key_env=ENV
        )
        cfg = ProviderConfig(answerer=endpoint, cache=CacheConfig(mode="readwrite"))
        providers = build_providers(cfg, tmp_path)
        try:
            url = providers.proxy_url("mem0", "ingest") + "/chat/completions"
            body = {"model": "x", "messages": [{"role": "user", "content": "hi"}]}
            replies = [httpx.post(url, json=body, timeout=10).json() for _ in range(2)]
        finally:
            providers.close()
    assert len(server.bodies) == 1  # the second reply came from the cache
    for reply in replies:
        assert reply["choices"][0]["message"]["content"] == "noted Bearer ***"
        assert KEY not in json.dumps(reply)
    assert _files_holding(tmp_path, KEY) == []
