"""Units of work, shards and `workers=N`: the split never changes a record."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from bench.answer.answer_prompt import load_answer_prompt
from bench.config import EndpointConfig, ProviderConfig, RunConfig
from bench.errors import ConfigError, PermanentError
from bench.loaders import load_dataset
from bench.records import read_record
from bench.run.outcome import UnitResult
from bench.run.scale.executor import run_in_processes, split_quota
from bench.run.scale.peak import BOUND_MB, log_peaks
from bench.run.scale.tracker import Tracker
from bench.run.scale.unit_task import UnitTask
from bench.run.scale.units import Shard, parse_shard, resolve_workers, units_of
from bench.types import Conversation
from tests.support.e2e_support import ROOT, load_records, run_cli, strip_timings
from tests.support.fault_server import Fault, FaultServer

SMOKE = ("dataset=smoke", "progress=false", "heartbeat_s=0")


def _conversations(n: int) -> tuple[Conversation, ...]:
    return tuple(Conversation(f"c{i}", ("A", "B"), (), ()) for i in range(n))


@pytest.mark.parametrize(
    ("text", "expected"), [("0/2", Shard(0, 2)), (" 3 / 4 ", Shard(3, 4)), (None, None)]
)
def test_shard_parses(text: str | None, expected: Shard | None) -> None:
    assert parse_shard(text) == expected


@pytest.mark.parametrize("text", ["2/2", "1", "a/b", "0/0", "-1/2"])
def test_bad_shard_is_a_config_error(text: str) -> None:
    with pytest.raises(ConfigError, match="shard="):
        parse_shard(text)


def test_shards_are_disjoint_and_cover_every_unit() -> None:
    convs = _conversations(7)
    picked = [[u.unit_id for u in units_of(convs, Shard(i, 3))] for i in range(3)]
    flat = sorted(uid for shard in picked for uid in shard)
    assert flat == sorted(c.conversation_id for c in convs)
    assert picked[0] == ["c0", "c3", "c6"]  # round-robin by position, deterministic


def test_auto_workers_use_cores_offline_and_one_for_live_providers() -> None:
    assert resolve_workers(0, offline=False, units=10) == 1
    assert resolve_workers(0, offline=True, units=1) == 1
    assert resolve_workers(8, offline=False, units=3) == 3
    assert resolve_workers(0, offline=True, units=10, phase="predict") == 1  # one process
    assert resolve_workers(0, offline=True, units=10) == min(10, os.cpu_count() or 1)
    with pytest.raises(ConfigError, match="workers=-1"):
        resolve_workers(-1, offline=True, units=3)


def test_each_of_n_processes_gets_a_share_of_the_rate_budget() -> None:
    live = EndpointConfig(kind="openai", requests_per_minute=100, tokens_per_minute=None)
    cfg = RunConfig(
        dataset=load_dataset_cfg(),
        provider=ProviderConfig(answerer=live),
        arms=["raw"],
        arm_options={"raw": {}},
        out="x",
    )
    shared = split_quota(cfg, 3)
    assert shared.provider.answerer.requests_per_minute == 33
    assert shared.provider.answerer.tokens_per_minute is None
    assert shared.progress is False


def load_dataset_cfg():  # type: ignore[no-untyped-def]
    from bench.config import DatasetConfig

    return DatasetConfig(name="smoke", path=str(ROOT / "datasets/fixtures/smoke_locomo.json"))


def test_heartbeat_counts_resumed_questions_out_of_the_rate(caplog) -> None:
    tracker = Tracker(10, show=False, heartbeat_s=0, workers=2)
    tracker.tick(0, 0, resumed=4)
    tracker.tick(3, 1)
    tracker.tick(9, 0)  # a retried unit re-reporting: capped at the total
    line = tracker.heartbeat()
    assert line.startswith("heartbeat: 10/10 questions (100%), 1 arm results in error")
    assert "2 worker(s)" in line
    with caplog.at_level(logging.INFO, logger="bench.run"):
        beating = Tracker(5, show=False, heartbeat_s=0.05, workers=1)
        beating.tick(2, 0)
        time.sleep(0.2)
        beating.close()
    assert any("heartbeat: 2/5 questions" in r.getMessage() for r in caplog.records)


@pytest.fixture(scope="module")
def serial_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("serial") / "run"
    done = run_cli(*SMOKE, f"out={out}", "workers=1")
    assert done.returncode == 0, done.stderr[-2000:]
    return out


def _same_records(a: Path, b: Path) -> None:
    left, right = load_records(a), load_records(b)
    assert sorted(left) == sorted(right) and left
    for qid in left:
        assert strip_timings(left[qid]) == strip_timings(right[qid]), qid


@pytest.mark.slow
@pytest.mark.parametrize("workers", [2, 4])
def test_workers_n_equal_workers_1(serial_run: Path, tmp_path: Path, workers: int) -> None:
    """`workers=2` is what `make locomo` uses on two cores (`workers=0`, auto)."""
    done = run_cli(*SMOKE, f"out={tmp_path / 'wn'}", f"workers={workers}")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "16 records written" in done.stderr
    _same_records(serial_run, tmp_path / "wn")
    health = [
        json.loads((d / "run.json").read_text())["extraction_health"]
        for d in (serial_run, tmp_path / "wn")
    ]
    assert health[0] and health[1] == health[0]  # the workers' health reaches run.json


@pytest.mark.slow
def test_two_shards_in_parallel_equal_one_process(serial_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "sharded"
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "bench.run", *SMOKE, f"out={out}", f"shard={i}/2"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(2)
    ]
    outputs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [o[1][-1500:] for o in outputs]
    written = sorted(o[1].strip().splitlines()[-1] for o in outputs)
    assert all("records written" in line for line in written)
    _same_records(serial_run, out)


def test_a_failing_unit_becomes_error_results_and_others_finish(tmp_path: Path) -> None:
    dataset = load_dataset(load_dataset_cfg())
    good = RunConfig(
        dataset=load_dataset_cfg(),
        provider=ProviderConfig(),
        arms=["raw"],
        arm_options={"raw": {"kind": "raw"}},
        out=str(tmp_path),
        progress=False,
    )
    bad = replace(good, arm_options={"raw": {"kind": "no-such-kind"}})
    prompt = load_answer_prompt(good.answer.prompt)
    first, second = units_of(dataset.conversations)
    tasks = [
        UnitTask(bad, prompt, first, str(tmp_path), {}),
        UnitTask(good, prompt, second, str(tmp_path), {}),
    ]
    tracker = Tracker(first.questions + second.questions, show=False, heartbeat_s=0, workers=2)
    results = sorted(run_in_processes(tasks, 2, tracker), key=lambda r: r.position)
    assert results[0].errors == first.questions
    assert results[0].first_error and results[0].first_error.startswith("unit smoke-1 failed")
    assert results[1].errors == 0 and results[1].written == second.questions
    assert results[0].peak_rss_mb is None  # a failed unit has no peak; a run one has its own
    assert results[1].peak_is_unit and 0 < (results[1].peak_rss_mb or 0) < BOUND_MB
    statuses = {
        read_record(p).conversation_id: read_record(p).arms["raw"].status
        for p in (tmp_path / "questions").glob("*.json")
    }
    assert statuses == {first.unit_id: "error", second.unit_id: "ok"}
    assert tracker.done == tracker.total


@pytest.mark.slow
def test_a_multirun_over_shards_fills_one_run_directory(serial_run: Path, tmp_path: Path) -> None:
    """The SLURM recipe's sweep (`-m shard=0/2,1/2`, basic launcher here): one run dir."""
    done = run_cli("-m", *SMOKE, "shard=0/2,1/2", f"out={tmp_path / 'sweep'}")
    assert done.returncode == 0, done.stderr[-2000:]
    _same_records(serial_run, tmp_path / "sweep" / "dataset=smoke")


def _smoke_cfg(out: Path, provider: ProviderConfig | None = None) -> RunConfig:
    return RunConfig(
        dataset=load_dataset_cfg(),
        provider=provider or ProviderConfig(),
        arms=["raw"],
        arm_options={"raw": {"kind": "raw"}},
        out=str(out),
        progress=False,
    )


@pytest.mark.slow
def test_a_permanent_failure_stops_the_units_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 404 (no such model) in the first unit: the queued unit writes nothing, the run stops.

    It used to run every other unit to its end before the error reached the command line.
    """
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")  # read by the spawned worker
    units = sorted(
        units_of(load_dataset(load_dataset_cfg()).conversations), key=lambda u: u.longest_first()
    )
    prompt = load_answer_prompt(_smoke_cfg(tmp_path).answer.prompt)
    with FaultServer() as server:
        server.always(Fault.http(404, message="The model `gpt-9` does not exist"))
        missing = EndpointConfig(kind="openai", model="gpt-9", base_url=server.base_url)
        tasks = [
            UnitTask(
                _smoke_cfg(tmp_path, ProviderConfig(answerer=missing)),
                prompt,
                units[0],
                str(tmp_path),
                {},
            ),
            UnitTask(_smoke_cfg(tmp_path), prompt, units[1], str(tmp_path), {}),
        ]
        tracker = Tracker(sum(u.questions for u in units), show=False, heartbeat_s=0, workers=1)
        with pytest.raises(PermanentError, match="HTTP 404"):
            run_in_processes(tasks, 1, tracker)
    assert not list(tmp_path.glob("questions/*.json"))  # the second unit never ran


def test_a_worker_reports_each_units_own_peak(tmp_path: Path) -> None:
    """The peak read after a unit is the unit's, not the worker's earlier, larger one."""
    script = (
        "from bench.run.outcome import UnitResult\n"
        "from bench.run.scale.peak import measured\n"
        "from bench.rss import peak_rss_mb\n"
        "big = bytearray(400 * 2**20); del big\n"  # an earlier unit's 400 MiB
        "before = peak_rss_mb()\n"
        "got = measured(lambda: UnitResult(unit_id='u', position=0))\n"
        "print(before, got.peak_rss_mb, got.peak_is_unit)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=True,
    )
    before, peak, own = done.stdout.split()
    assert float(before) >= 400 and own == "True"
    assert float(peak) < float(before) - 300


def test_a_unit_over_the_bound_is_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    fits = UnitResult(unit_id="a", position=0, peak_rss_mb=900.0, peak_is_unit=True, seconds=3)
    over = replace(fits, unit_id="b", peak_rss_mb=BOUND_MB + 1.0)
    with caplog.at_level(logging.INFO, logger="bench.run"):
        log_peaks([fits, over, UnitResult(unit_id="failed", position=2)])
    lines = [(r.levelno, r.getMessage()) for r in caplog.records]
    assert lines == [
        (logging.INFO, "unit a: peak resident memory 900 MiB (its own), 3 s"),
        (
            logging.WARNING,
            f"unit b: peak resident memory {BOUND_MB + 1} MiB (its own), "
            f"over the {BOUND_MB} MiB bound, 3 s",
        ),
    ]
