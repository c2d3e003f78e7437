"""Extraction health is a result: a memory arm whose extractor failed says so, loudly.

Real runs through `python -m bench.run` against the fault server on 127.0.0.1:
- a server that ignores `tools` (no tool-capable template) makes every extraction fail:
  the run ends with a degraded-extraction warning and exit 1, and the health is in the
  records' arm results and in run.json;
- one extractor call answered HTTP 400 is one failed exchange, not a failed conversation.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.result_parts import Health
from bench.scoring.health import degraded_warnings, table_from_json, table_to_json
from tests.support.e2e_support import load_records, run_cli
from tests.support.fault_server import Fault, FaultServer

ENV = {"OPENAI_API_KEY": "sk-fake-health-0c1d2e3f"}


def overrides(base_url: str, out: Path) -> list[str]:
    """The smoke run with the neuromorphic arm only and an LLM extractor on the server."""
    return [
        "dataset=smoke",
        f"out={out}",
        "progress=false",
        "provider=openai",
        "arms=[neuromorphic]",
        f"provider.answerer.base_url={base_url}",
        "provider.answerer.max_attempts=2",
        "provider.embedder.kind=wordllama",
        "provider.embedder.model=wordllama/l2_supercat_256",
        "provider.embedder.dim=256",
    ]


def health_of(run_dir: Path) -> dict[str, dict[str, dict[str, int]]]:
    meta = json.loads((run_dir / "run.json").read_text())
    return meta["extraction_health"]  # type: ignore[no-any-return]


def test_degraded_when_health_thresholds_crossed() -> None:
    assert not Health(100, 10, 5).degraded  # exactly 10% failed is tolerated
    assert Health(100, 11, 5).degraded
    assert Health(10, 0, 0).degraded  # nothing stored
    assert not Health(0, 0, 0).degraded  # nothing asked
    table = {"b": {"c2": Health(4, 4, 0), "c1": Health(4, 0, 3)}, "a": {"c1": Health(1, 1, 0)}}
    assert table_from_json(table_to_json(table)) == table
    lines = degraded_warnings(table)
    assert lines == [
        "arm a conversation c1: extraction degraded — 1 of 1 exchanges failed, 0 facts stored",
        "arm b conversation c2: extraction degraded — 4 of 4 exchanges failed, 0 facts stored",
    ]


NO_SCHEMA = "provider.answerer.json_schema=false"  # nothing to fall back to


@pytest.mark.slow
def test_server_ignoring_tools_degrades_the_run(tmp_path: Path) -> None:
    with FaultServer() as server:
        server.ignore_tools()
        proc = run_cli(*overrides(server.base_url, tmp_path / "run"), NO_SCHEMA, env=ENV)
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "0 arm results in error" in proc.stderr
    assert "extraction degraded" in proc.stderr
    health = health_of(tmp_path / "run")["neuromorphic"]
    assert health, "no conversation in extraction_health"
    for row in health.values():
        assert row["exchanges"] > 0
        assert row["failed"] == row["exchanges"]
        assert row["facts"] == 0
    records = load_records(tmp_path / "run")
    for record in records.values():
        result = record["arms"]["neuromorphic"]
        assert result["status"] == "ok"
        assert result["extraction"] == health[record["conversation_id"]]


@pytest.mark.slow
def test_one_failed_extractor_call_is_one_failed_exchange(tmp_path: Path) -> None:
    with FaultServer() as server:
        server.fail_next_extractions(Fault.http(400))  # permanent: not retried
        proc = run_cli(*overrides(server.base_url, tmp_path / "run"), env=ENV)
    assert "0 arm results in error" in proc.stderr, proc.stderr[-2000:]
    health = health_of(tmp_path / "run")["neuromorphic"]
    assert sum(row["failed"] for row in health.values()) == 1
    assert all(row["facts"] > 0 for row in health.values())
    records = load_records(tmp_path / "run")
    assert all(r["arms"]["neuromorphic"]["status"] == "ok" for r in records.values())


@pytest.mark.slow
def test_summary_marks_degraded_arm(tmp_path: Path) -> None:
    with FaultServer() as server:
        server.ignore_tools()
        run_cli(*overrides(server.base_url, tmp_path / "run"), NO_SCHEMA, env=ENV)
    proc = run_cli(str(tmp_path / "run"), module="bench.summarise")
    assert "DEGRADED extraction neuromorphic:" in proc.stdout + proc.stderr
    assert "facts stored" in proc.stdout + proc.stderr
