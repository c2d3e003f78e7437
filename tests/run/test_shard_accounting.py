"""Shards of one run sum their costs and health in run.json, whatever order they write in.

- Unit: two sessions saving into one run.json in an interleaved order (as concurrent
  shards do) leave the sum of their costs and both conversations' health rows.
- End to end (slow): the smoke run against the fault server on 127.0.0.1, as one process
  and as `shard=0/2` + `shard=1/2` one after the other and at the same time, gives the
  same run.json `accounting` (timings aside) and `extraction_health`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hydra import compose, initialize_config_dir

from bench.paths import CONF_DIR
from bench.providers.accounting import accounting_delta, add_accounting
from bench.result_parts import Health
from bench.run.directory import RunDirectory, identity
from bench.run.outcome import RunOutcome
from bench.run.run_json import RunJson
from bench.run.settings import load_run_config
from bench.runmeta import RunMeta
from tests.support.e2e_support import ROOT, run_cli
from tests.support.fault_server import FaultServer

ENV = {"OPENAI_API_KEY": "sk-fake-shards-51c0e2"}


def _cost(calls: int, cost: float | None) -> dict[str, Any]:
    role = {"model": "m", "calls": calls, "http_requests": calls, "cost": cost}
    return {"roles": {"answerer": role}, "total": {"calls": calls, "cost": cost}}


def test_accounting_delta_inverts_add() -> None:
    before, now = _cost(3, 0.25), _cost(10, 1.0)
    assert add_accounting(before, accounting_delta(now, before)) == now
    assert accounting_delta(now, {}) == now


def test_interleaved_sessions_sum_their_costs_and_health(tmp_path: Path) -> None:
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = load_run_config(compose(config_name="config", overrides=["dataset=smoke"]))
    ident = identity(cfg, "d" * 64, "p" * 64)
    spent = {"a": _cost(0, 0.0), "b": _cost(0, 0.0)}

    def session(name: str) -> RunJson:
        outcome = RunOutcome(run_dir=tmp_path)
        return RunJson(cfg, RunDirectory(tmp_path), ident, RunMeta(), outcome, lambda: spent[name])

    first, second = session("a"), session("b")  # both start before either saves
    spent["a"] = _cost(4, 0.5)
    first.outcome.health["neuromorphic"] = {"c1": Health(18, 0, 23)}
    first.save()
    spent["b"] = _cost(7, 0.25)
    second.outcome.health["neuromorphic"] = {"c2": Health(3, 1, 5)}
    second.save()
    spent["a"] = _cost(6, 0.75)  # a later save of the first adds only what is new
    first.save()
    meta = json.loads((tmp_path / "run.json").read_text())
    assert meta["accounting"] == _cost(13, 1.0)
    assert meta["extraction_health"]["neuromorphic"] == {
        "c1": Health(18, 0, 23).to_json(),
        "c2": Health(3, 1, 5).to_json(),
    }


def _overrides(base_url: str, out: Path) -> list[str]:
    return [
        "dataset=smoke",
        f"out={out}",
        "progress=false",
        "provider=openai",
        "judge=llm",
        "arms=[rag,neuromorphic]",
        f"provider.answerer.base_url={base_url}",
        f"provider.embedder.base_url={base_url}",
        "provider.embedder.model=fault-wordllama",
        "provider.embedder.dim=256",
    ]


SPLIT = (
    "http_requests",
    "cache_hits",
    "coalesced",
    "prompt_tokens",
    "completion_tokens",
    "reasoning_tokens",
    "cost",
    "latency_ms",
)
"""How a role's calls split into sent, cached and coalesced (and so their tokens and cost)
depends on which identical requests overlapped in time (arms ingest side by side): not
compared; every call is counted once somewhere (checked by `_every_call_counted`)."""


def _comparable(run_dir: Path) -> tuple[Any, Any]:
    """run.json's accounting without its timing-dependent split, and the health."""
    meta = json.loads((run_dir / "run.json").read_text())
    _every_call_counted(meta["accounting"])

    def strip(tree: Any) -> Any:
        if isinstance(tree, dict):
            return {k: strip(v) for k, v in tree.items() if k not in SPLIT}
        return pytest.approx(tree) if isinstance(tree, float) else tree

    return strip(meta["accounting"]), meta["extraction_health"]


def _every_call_counted(accounting: dict[str, Any]) -> None:
    for role in accounting["roles"].values():
        sent, cached = role.get("http_requests", 0), role.get("cache_hits", 0)
        shared, errors = role.get("coalesced", 0), role.get("errors", 0)
        assert sent + cached + shared >= role.get("calls", 0) - errors, role


@pytest.mark.slow
def test_two_shards_sum_to_one_process(tmp_path: Path) -> None:
    with FaultServer() as server:
        proc = run_cli(*_overrides(server.base_url, tmp_path / "one"), env=ENV)
        assert proc.returncode == 0, proc.stderr[-2000:]
        for shard in ("shard=0/2", "shard=1/2"):
            proc = run_cli(*_overrides(server.base_url, tmp_path / "seq"), shard, env=ENV)
            assert proc.returncode == 0, proc.stderr[-2000:]
        env = {**os.environ, **ENV, "HYDRA_FULL_ERROR": "0"}
        command = [
            sys.executable,
            "-m",
            "bench.run",
            *_overrides(server.base_url, tmp_path / "par"),
        ]
        both = [
            subprocess.Popen(
                [*command, shard], cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True
            )
            for shard in ("shard=0/2", "shard=1/2")
        ]
        for child in both:
            _, err = child.communicate(timeout=300)
            assert child.returncode == 0, err[-2000:]
    accounting, health = _comparable(tmp_path / "one")
    assert accounting["total"]["calls"] > 0 and health["neuromorphic"]
    assert _comparable(tmp_path / "seq") == (accounting, health)
    assert _comparable(tmp_path / "par") == (accounting, health)
