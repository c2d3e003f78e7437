"""The whole smoke run through the fault server, over real HTTP on loopback.

- With ~20% injected transient faults the records (answers, verdicts) equal the
  fault-free run's, and no window at the server holds more requests than allowed.
- Re-running, and re-judging with an unchanged judge, make zero HTTP requests.
- An endpoint that dies leaves `error` results, exit status 1 and a message naming
  its URL; the next run against a working endpoint completes exactly those results.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hydra import compose, initialize_config_dir

from bench.paths import CONF_DIR
from bench.run.settings import load_run_config
from tests.support.e2e_support import load_records, run_cli
from tests.support.fault_server import Fault, FaultServer, max_in_window, transient_faults

FAKE_KEY = "sk-fake-e2e-2b7d91c0a4f36e58"
ENV = {"OPENAI_API_KEY": FAKE_KEY}
RPM = 8  # per WINDOW_S: below the unthrottled peak (~12 per 0.5 s here), so the cap binds
WINDOW_S = 0.5  # the faulty run's limiter window, shortened so the test stays fast


def smoke_overrides(base_url: str, out: Path, *extra: str) -> list[str]:
    """`provider=openai` with every endpoint on the fault server."""
    return [
        "dataset=smoke",
        f"out={out}",
        "progress=false",
        "provider=openai",
        "judge=llm",
        f"provider.answerer.base_url={base_url}",
        "provider.answerer.timeout_s=0.5",
        f"provider.embedder.base_url={base_url}",
        "provider.embedder.model=fault-wordllama",
        "provider.embedder.dim=256",
        "provider.embedder.timeout_s=0.5",
        *extra,
    ]


def verdicts(run_dir: Path) -> dict[str, dict[str, Any]]:
    """What a run concluded per question and arm: status, answers, scores and verdicts."""
    out = {}
    for qid, record in load_records(run_dir).items():
        for arm, result in record["arms"].items():
            judgements = {
                j: (v["status"], v.get("verdict"), v.get("raw"))
                for j, v in (result.get("judgements") or {}).items()
            }
            out[f"{qid}/{arm}"] = {
                "status": result["status"],
                "answer": result.get("answer"),
                "raw_answer": result.get("raw_answer"),
                "correct": result.get("correct"),
                "scores": result.get("scores"),
                "judgements": judgements,
            }
    return out


@pytest.fixture(scope="module")
def server():
    with FaultServer() as srv:
        yield srv


@pytest.fixture(scope="module")
def clean_run(server: FaultServer, tmp_path_factory) -> tuple[Path, int]:
    """A fault-free run through the CLI; returns its directory and request count."""
    out = tmp_path_factory.mktemp("clean") / "run"
    server.clear_log()
    proc = run_cli(*smoke_overrides(server.base_url, out), env=ENV)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert FAKE_KEY not in proc.stdout + proc.stderr
    return out, len(server.requests)


@pytest.mark.slow
def test_clean_run_is_complete_and_judged(clean_run):
    out, requests = clean_run
    results = verdicts(out)
    assert len(results) == 64 and requests > 0  # 16 smoke questions x 4 arms
    assert all(r["status"] == "ok" for r in results.values())
    assert all(r["judgements"]["llm"][0] == "ok" for r in results.values())
    meta = json.loads((out / "run.json").read_text())
    assert meta["accounting"]["total"]["http_requests"] == requests


@pytest.mark.slow
def test_keys_never_reach_records_run_json_or_logs(clean_run):
    out, _ = clean_run
    for path in out.rglob("*"):
        if path.is_file():
            assert FAKE_KEY.encode() not in path.read_bytes(), path


@pytest.mark.slow
def test_faulty_run_gives_the_same_records_within_the_rate_limit(
    clean_run, tmp_path: Path, monkeypatch
):
    from bench.providers import factory
    from bench.run.pipeline import run_benchmark

    monkeypatch.setattr(factory, "RATE_WINDOW_S", WINDOW_S)
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    limits = [f"provider.answerer.requests_per_minute={RPM}"]
    limits.append(f"provider.embedder.requests_per_minute={RPM}")
    with FaultServer(fault_rate=0.2, seed=3, random_faults=transient_faults(1.0)) as faulty:
        overrides = smoke_overrides(faulty.base_url, tmp_path / "run", *limits)
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
            cfg = load_run_config(compose(config_name="config", overrides=overrides))
        outcome = run_benchmark(cfg)
        log = faulty.requests
    assert outcome.errors == 0
    assert verdicts(tmp_path / "run") == verdicts(clean_run[0])
    injected = Counter(r.fault for r in log if r.fault)
    assert sum(injected.values()) >= 0.1 * len(log) and len(injected) >= 4, injected
    chat_times = [r.t for r in log if r.path.endswith("/chat/completions")]
    assert len(chat_times) > RPM  # more requests than one window allows: the cap mattered
    for model in {r.model for r in log}:  # one limiter per deployment (base URL, model)
        times = [r.t for r in log if r.model == model]
        assert max_in_window(times, WINDOW_S) <= RPM, model


def test_second_run_makes_zero_requests(server: FaultServer, clean_run):
    out, _ = clean_run
    server.clear_log()
    proc = run_cli(*smoke_overrides(server.base_url, out), env=ENV)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert server.requests == []
    assert "0 records written" in proc.stderr


def test_rejudge_with_an_unchanged_judge_makes_zero_requests(server: FaultServer, clean_run):
    out, _ = clean_run
    before = verdicts(out)
    server.clear_log()
    proc = run_cli(*smoke_overrides(server.base_url, out, "scoring.rejudge=true"), env=ENV)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert server.requests == []
    assert verdicts(out) == before


@pytest.mark.slow
def test_dead_endpoint_leaves_errors_and_the_next_run_completes_them(clean_run, tmp_path: Path):
    out = tmp_path / "run"
    retries = ["provider.answerer.max_attempts=2", "provider.embedder.max_attempts=2"]
    with FaultServer() as dying:
        dying.always(Fault.http(503), after=clean_run[1] // 2)
        first = run_cli(*smoke_overrides(dying.base_url, out, *retries), env=ENV)
        assert first.returncode == 1, first.stderr[-3000:]
        assert dying.base_url in first.stdout + first.stderr  # the log names the endpoint
        after_first = verdicts(out)
        failed = {k for k, v in after_first.items() if _incomplete(v)}
        assert failed and len(failed) < len(after_first)
        messages = [r["error"] for r in _arm_results(out) if r["status"] == "error"]
        assert all(dying.base_url in m for m in messages), messages[:3]

        dying.always(None)
        second = run_cli(*smoke_overrides(dying.base_url, out), env=ENV)
    assert second.returncode == 0, second.stderr[-3000:]
    after_second = verdicts(out)
    assert after_second == verdicts(clean_run[0])
    unchanged = {k: v for k, v in after_second.items() if k not in failed}
    assert unchanged == {k: v for k, v in after_first.items() if k not in failed}
    touched = {k.split("/")[0] for k in failed}
    assert f"{len(touched)} records written" in second.stderr


def _incomplete(result: dict[str, Any]) -> bool:
    """An arm result in `error`, or `ok` but with a verdict in `error` (re-judged later)."""
    return result["status"] == "error" or any(
        status == "error" for status, _, _ in result["judgements"].values()
    )


def _arm_results(run_dir: Path) -> list[dict[str, Any]]:
    return [r for rec in load_records(run_dir).values() for r in rec["arms"].values()]
