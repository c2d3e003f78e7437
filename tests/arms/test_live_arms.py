"""The `http` and `mcp` arms end to end against the reference server on loopback.

Done-when checks of issue 11: ranked retrieval equal to the in-process neuromorphic
arm; a killed run leaves its namespaces in state.json and the next run or
`bench.cleanup` deletes them; bad endpoints and contracts end in one line, exit 2.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from arms.live_replies import markers_of
from tests.support.e2e_support import ROOT, last_line, load_records, run_cli, strip_timings
from tests.support.live_server import project_ids, reference_server

STDIO = "arm_options.mcp.command=[python,-m,arms.server,--mcp-stdio]"


def live_args(url: str, out: Path) -> list[str]:
    """Overrides pointing the http and mcp arms at the server at `url`."""
    return [
        "dataset=smoke",
        f"out={out}",
        "progress=false",
        "save_context=true",
        f"arm_options.http.base_url={url}",
        f"arm_options.mcp.url={url}/mcp",
    ]


def ledger(out: Path) -> list[dict[str, str]]:
    """The namespaces state.json lists."""
    return list(json.loads((out / "state.json").read_text())["namespaces"])


@pytest.mark.slow
def test_live_arms_retrieve_exactly_what_the_in_process_engine_does(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with reference_server(tmp_path / "data") as url:
        arms = "arms=[raw,rag,neuromorphic,http,mcp]"
        done = run_cli(arms, *live_args(url, out))
        assert done.returncode == 0, done.stderr[-2000:]
        records = load_records(out)
        assert len(records) == 16
        for record in records.values():
            engine = record["arms"]["neuromorphic"]
            assert engine["retrieved_ids"], record["question_id"]
            for live in ("http", "mcp"):
                got = record["arms"][live]
                assert got["status"] == "ok"
                assert got["retrieved_ids"] == engine["retrieved_ids"]
                assert got["context"] == engine["context"]
                assert got["answer"] == engine["answer"]
        assert project_ids(url) == []  # cleanup=true deleted what the run created
        assert ledger(out) == []


@pytest.mark.slow
def test_live_arms_in_worker_processes_equal_one_process(tmp_path: Path) -> None:
    """workers=2: each process deletes only its own namespaces, never a sibling's in use."""
    with reference_server(tmp_path / "data") as url:
        runs = {}
        for workers in (1, 2):
            out = tmp_path / f"w{workers}"
            done = run_cli("arms=[http,mcp]", f"workers={workers}", *live_args(url, out))
            assert done.returncode == 0, done.stderr[-2000:]
            assert "0 arm results in error" in done.stderr
            runs[workers] = {k: strip_timings(r) for k, r in load_records(out).items()}
            assert ledger(out) == []
        assert len(runs[2]) == 16 and runs[2] == runs[1]
        assert project_ids(url) == []


def _kill_after_first_namespace(args: list[str]) -> None:
    """Start a run; SIGKILL it as soon as state.json lists a conversation namespace."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "bench.run", *args],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    out = Path(next(a for a in args if a.startswith("out="))[4:])
    deadline = time.monotonic() + 300
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            state = out / "state.json"
            try:
                if any(n["unit"] != "probe" for n in ledger(out)) if state.exists() else False:
                    break
            except (ValueError, KeyError):
                pass  # caught mid-replace: read again
            time.sleep(0.02)
        assert proc.poll() is None, "run ended before it created a namespace"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


@pytest.mark.slow
def test_killed_run_is_cleaned_by_the_next_run_or_bench_cleanup(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["arms=[http]", *live_args("URL", out)]
    with reference_server(tmp_path / "data") as url:
        args = [a.replace("URL", url) for a in args]
        _kill_after_first_namespace(args)
        left = [n["namespace"] for n in ledger(out)]
        assert left and set(left) <= set(project_ids(url))
        cleaned = run_cli(str(out), f"arm_options.http.base_url={url}", module="bench.cleanup")
        assert cleaned.returncode == 0, cleaned.stderr
        assert project_ids(url) == [] and ledger(out) == []

        _kill_after_first_namespace(args)
        assert ledger(out) and project_ids(url)
        resumed = run_cli(*args)
        assert resumed.returncode == 0, resumed.stderr[-2000:]
        assert project_ids(url) == [] and ledger(out) == []


@pytest.mark.slow
def test_mcp_arm_over_stdio_and_the_remember_path(tmp_path: Path) -> None:
    with reference_server(tmp_path / "data") as url:
        out = tmp_path / "run"
        done = run_cli(
            "arms=[http,mcp]",
            *live_args(url, out),
            STDIO,
            "arm_options.mcp.url=null",
            "arm_options.http.write_path=remember",
            "arm_options.http.marker=text",
        )
        assert done.returncode == 0, done.stderr[-2000:]
        for record in load_records(out).values():
            raw = record["arms"]["http"]
            assert raw["retrieved_ids"] and "[bench:" not in raw["context"]
            assert raw["write_path"] == "remember"
            assert record["arms"]["mcp"]["write_path"] == "capture"
            assert set(raw["retrieved_ids"]) <= {
                f"D{s}:{t}" for s in range(1, 13) for t in range(1, 4)
            }
            assert record["arms"]["mcp"]["status"] == "ok"
        assert project_ids(url) == []


def test_markers_map_merged_and_split_items_back_to_units() -> None:
    merged = {"text": "a [bench:D1:1] b [bench:D1:2]", "metadata": {}}
    assert markers_of(merged, merged["text"], "metadata.bench") == ["D1:1", "D1:2"]
    tagged = {"text": "x", "meta": {"tags": ["[bench:D2:1]", "D2:2"]}}
    assert markers_of(tagged, "x", "meta.tags") == ["D2:1", "D2:2"]
    assert markers_of({"text": "no marker"}, "no marker", "metadata.bench") == []


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        (["arms=[http]", "arm_options.http.base_url=http://127.0.0.1:1"],
         "error: GET http://127.0.0.1:1/health: cannot reach the service"),
        # each of the others starts a reference server and a run (4-5 s): `make test-slow`
        pytest.param(["arms=[http]", "arm_options.http.token_env=ARMBENCH_WRONG_TOKEN"],
                     "HTTP 401 unauthorised", marks=pytest.mark.slow),
        pytest.param(["arms=[http]", "arm_options.http.results_path=hits"],
                     "no field 'hits' in the response; fix arm_options.http.results_path",
                     marks=pytest.mark.slow),
        pytest.param(["arms=[mcp]", "arm_options.mcp.search_tool=recall"],
                     "/mcp: no tool 'recall' (server has: capture, create_project",
                     marks=pytest.mark.slow),
    ],
)  # fmt: skip
def test_bad_endpoints_end_in_one_line_and_exit_2(
    tmp_path: Path, overrides: list[str], expected: str
) -> None:
    env = {"ARMBENCH_TEST_TOKEN": "right-token", "ARMBENCH_WRONG_TOKEN": "wrong-token"}
    with reference_server(tmp_path / "data", env, "--token-env", "ARMBENCH_TEST_TOKEN") as url:
        args = [
            a
            for a in live_args(url, tmp_path / "run")
            if "base_url" not in a or "base_url" not in " ".join(overrides)
        ]
        if "token_env" not in " ".join(overrides) and "http" in overrides[0]:
            args.append("arm_options.http.token_env=ARMBENCH_TEST_TOKEN")
        done = run_cli(*args, *overrides, env=env)
        assert done.returncode == 2, done.stderr[-2000:]
        assert expected in last_line(done.stderr)
        assert last_line(done.stderr).startswith("error: ")
        assert "Traceback" not in done.stderr
        assert project_ids(url, token="right-token") == []  # the probe cleaned up after itself


@pytest.mark.slow
def test_a_wrong_results_path_leaves_no_run_the_corrected_command_trips_on(
    tmp_path: Path,
) -> None:
    out = tmp_path / "run"
    with reference_server(tmp_path / "data") as url:
        wrong = run_cli("arms=[http]", *live_args(url, out), "arm_options.http.results_path=hits")
        assert wrong.returncode == 2 and "results_path" in last_line(wrong.stderr)
        corrected = run_cli("arms=[http]", *live_args(url, out))
        assert corrected.returncode == 0, last_line(corrected.stderr)
        assert len(load_records(out)) == 16


@pytest.mark.slow
def test_predict_then_evaluate_equals_all_and_evaluate_calls_no_service(tmp_path: Path) -> None:
    with reference_server(tmp_path / "data") as url:
        arms = "arms=[neuromorphic,http]"
        whole, split = tmp_path / "all", tmp_path / "split"
        assert run_cli(arms, *live_args(url, whole)).returncode == 0
        predicted = run_cli(arms, *live_args(url, split), "phase=predict")
        assert predicted.returncode == 0, predicted.stderr[-2000:]
        assert not (split / "questions").exists() or not load_records(split)
        calls = httpx.get(f"{url}/v1/stats", timeout=120).json()["calls"]
        evaluated = run_cli(arms, *live_args(url, split), "phase=evaluate")
        assert evaluated.returncode == 0, evaluated.stderr[-2000:]
        assert httpx.get(f"{url}/v1/stats", timeout=120).json()["calls"] == calls
        a, b = load_records(whole), load_records(split)
        assert len(a) == 16 and a.keys() == b.keys()
        assert all(strip_timings(a[q]) == strip_timings(b[q]) for q in a)
        assert {r["arms"]["http"]["write_path"] for r in b.values()} == {"capture"}
        assert {r["arms"]["neuromorphic"].get("write_path") for r in b.values()} == {None}

        stem = sorted((split / "predictions").glob("*.json"))[0]
        data = json.loads(stem.read_text())
        data["arms"]["http"]["identity"] = "0" * 16
        stem.write_text(json.dumps(data))
        refused = run_cli(arms, *live_args(url, split), "phase=evaluate", "scoring.rejudge=true")
        assert refused.returncode == 2
        assert "predicted under another predict identity" in last_line(refused.stderr)


@pytest.mark.slow
def test_http_arm_in_a_recall_suite_ranks_like_the_engine(tmp_path: Path) -> None:
    out = tmp_path / "suite"
    with reference_server(tmp_path / "data") as url:
        done = run_cli(
            "suite.path=datasets/fixtures/suites/smoke.json",
            "arms=[neuromorphic,http]",
            f"arm_options.http.base_url={url}",
            f"out={out}",
            f"stores={tmp_path / 'st'}",
            module="bench.suite",
        )
        assert done.returncode == 0, done.stderr[-2000:]
        assert project_ids(url) == []
        # Run-wide state stays in <out> (ArmServices.run_dir) when stores live elsewhere.
        assert ledger(out) == [] and not (tmp_path / "st" / "state.json").exists()
        assert (tmp_path / "st" / "stores" / "neuromorphic").is_dir()

    def ranking(arm: str) -> list[tuple[str, str, str]]:
        lines = (out / "runs" / f"{arm}.trec").read_text().splitlines()
        return [(f[0], f[2], f[3]) for f in (line.split() for line in lines)]

    assert ranking("http") and ranking("http") == ranking("neuromorphic")
    cards = {
        a: json.loads((out / "comparable" / f"{a}.json").read_text())
        for a in ("http", "neuromorphic")
    }
    assert cards["http"]["metadata"]["write_path"] == "capture"
    assert cards["neuromorphic"]["metadata"]["write_path"].startswith("ingest")
