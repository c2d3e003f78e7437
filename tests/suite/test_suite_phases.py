"""`python -m bench.suite phase=predict|evaluate`: the split run equals one `phase=all` run.

Evaluate builds no arm: against the reference server it makes zero calls (counted by
the server's own `/v1/stats`), and it refuses predictions made under another identity.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.e2e_support import last_line, run_cli
from tests.support.live_server import project_ids, reference_server

SMOKE = "suite.path=datasets/fixtures/suites/smoke.json"
TIMINGS = ("latency", "ingest_s", "retrieve_ms")


def suite(*overrides: str) -> Any:
    """Run `python -m bench.suite` with progress off."""
    return run_cli(SMOKE, "progress=false", *overrides, module="bench.suite")


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in TIMINGS}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def outputs(out: Path) -> dict[str, Any]:
    """report.json, comparable/*.json (timings aside) and runs/*.trec of a suite run."""
    files: dict[str, Any] = {"report.json": _strip(json.loads((out / "report.json").read_text()))}
    for path in sorted((out / "comparable").glob("*.json")):
        files[f"comparable/{path.name}"] = _strip(json.loads(path.read_text()))
    for path in sorted((out / "runs").glob("*")):
        files[f"runs/{path.name}"] = path.read_text()
    return files


@pytest.mark.slow
def test_predict_then_evaluate_equals_all_offline(tmp_path: Path) -> None:
    arms = ("arms=[raw,rag,neuromorphic]", "suite.answer=true")
    whole, split = tmp_path / "all", tmp_path / "split"
    done = suite(*arms, f"out={whole}")
    assert done.returncode == 0, done.stderr[-2000:]

    predicted = suite(*arms, f"out={split}", "phase=predict")
    assert predicted.returncode == 0, predicted.stderr[-2000:]
    assert not (split / "report.json").exists()
    stored = sorted((split / "suites").glob("*/predictions/*.json"))
    assert len(stored) == len(
        json.loads(Path("datasets/fixtures/suites/smoke.json").read_text())["queries"]
    )
    before = {p: p.stat().st_mtime_ns for p in stored}
    again = suite(*arms, f"out={split}", "phase=predict")  # resumes: nothing left to do
    assert again.returncode == 0, again.stderr[-2000:]
    assert {p: p.stat().st_mtime_ns for p in stored} == before

    evaluated = suite(*arms, f"out={split}", "phase=evaluate")
    assert evaluated.returncode == 0, evaluated.stderr[-2000:]
    a, b = outputs(whole), outputs(split)
    assert a.keys() == b.keys() and len(a) == 1 + 3 + 4  # report, 3 cards, 3 runs + qrels
    for name in a:
        assert a[name] == b[name], name
    assert b["report.json"]["arms"]["rag"]["answer"]  # the answerer ran in evaluate
    report = json.loads((split / "report.json").read_text())
    assert report["arms"]["rag"]["ingest_s"] > 0  # predict's ingestion time is reported

    changed = suite(*arms, f"out={split}", "phase=evaluate", "arm_options.rag.top_k=7")
    assert changed.returncode == 2
    line = last_line(changed.stderr)
    assert line.startswith("error: ") and "predicted under another predict identity" in line
    assert "Traceback" not in changed.stderr

    missing = suite(*arms, f"out={tmp_path / 'none'}", "phase=evaluate")
    assert missing.returncode == 2
    assert "run phase=predict first" in last_line(missing.stderr)


@pytest.mark.slow
def test_suite_evaluate_makes_no_call_to_the_memory_service(tmp_path: Path) -> None:
    with reference_server(tmp_path / "data") as url:
        arms = ("arms=[neuromorphic,http]", f"arm_options.http.base_url={url}")
        whole, split = tmp_path / "all", tmp_path / "split"
        assert suite(*arms, f"out={whole}").returncode == 0
        predicted = suite(*arms, f"out={split}", "phase=predict")
        assert predicted.returncode == 0, predicted.stderr[-2000:]
        calls = httpx.get(f"{url}/v1/stats", timeout=120).json()["calls"]
        assert calls["search"] > 0 and calls["capture"] > 0
        evaluated = suite(*arms, f"out={split}", "phase=evaluate")
        assert evaluated.returncode == 0, evaluated.stderr[-2000:]
        assert httpx.get(f"{url}/v1/stats", timeout=120).json()["calls"] == calls
        assert project_ids(url) == []
    stored = [json.loads(p.read_text()) for p in (split / "suites").glob("*/predictions/*")]
    contexts = [e["context"] for s in stored for e in s["arms"].values()]
    assert contexts and all(c["items"] for c in contexts)
    assert {c["text"] for c in contexts} | {i["text"] for c in contexts for i in c["items"]} == {
        ""
    }  # no answerer: the ranking is stored, the texts are not
    a, b = outputs(whole), outputs(split)
    assert a == b
    assert a["runs/http.trec"] == a["runs/neuromorphic.trec"].replace("neuromorphic", "http")
    card = json.loads((split / "comparable" / "http.json").read_text())
    assert card["metadata"]["write_path"] == "capture"
