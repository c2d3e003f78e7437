"""The parts of `bench.llm_smoke` that need no llama.cpp: counters, command lines, folders.

The end-to-end smoke against a real server is `tests/test_live.py` (marker `live`).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bench.llm_smoke import (
    MARKER,
    Assets,
    ServerPlan,
    SmokeError,
    bench_command,
    parse_metrics,
    prepare_out,
    run_stats,
)
from tests.e2e_support import ROOT

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
    assert stats.http_requests == 0
