"""Progress where work takes long: ingestion in the bar and heartbeat, predict counted, run.log."""

from __future__ import annotations

import logging
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from arms.neuromorphic.arm import NeuromorphicArm
from arms.neuromorphic.config import NeuromorphicConfig
from bench.arm import ArmServices
from bench.remote.mirror import NEVER_SYNCED
from bench.run.scale import ingesting
from bench.run.scale.tracker import Tracker
from bench.tokens import TokenCounter
from tests.arms.test_engine_support import HashEmbedder
from tests.arms.test_neuromorphic_arm import Exploding, sample_conversation
from tests.support.e2e_support import run_cli

Report = tuple[str, str, int, int, int]


def test_heartbeat_names_the_units_being_ingested_with_an_eta(monkeypatch) -> None:
    clock = iter([100.0, 102.0, 102.0, 103.0])  # update, update, eta, update
    monkeypatch.setattr(ingesting.time, "monotonic", lambda: next(clock))
    table = ingesting.IngestTable()
    table.update("neuromorphic", "smoke-1", 0, 10, 0)
    table.update("neuromorphic", "smoke-1", 2, 10, 3)  # 2 exchanges in 2 s: 8 left, 8 s
    assert table.line() == (
        "ingesting 1 unit(s): neuromorphic smoke-1 2/10 exchanges, 3 facts; ingest ETA 0:00:08"
    )
    assert table.postfix() == "neuromorphic smoke-1 2/10"
    table.update("neuromorphic", "smoke-1", 10, 10, 9)  # done: leaves the table
    assert table.line() == "" and table.postfix() == ""


def test_the_eta_counts_ingestion_and_does_not_climb_during_it(monkeypatch) -> None:
    """Before: `ETA unknown` while extracting, then a rate diluted by the extraction time."""
    now = [100.0]
    monkeypatch.setattr(ingesting.time, "monotonic", lambda: now[0])
    tracker = Tracker(10, show=False, heartbeat_s=0, workers=1)
    tracker.ingesting("neuromorphic", "c1", 0, 10, 0)
    now[0] = 110.0
    tracker.ingesting("neuromorphic", "c1", 5, 10, 4)  # 5 exchanges in 10 s: 10 s left
    assert "ETA >= 0:00:10," in tracker.heartbeat()  # at least the ingestion left
    now[0] = 120.0
    tracker.ingesting("neuromorphic", "c1", 10, 10, 9)  # 20 s of ingestion, then answering
    now[0] = 130.0
    tracker.tick(5, 0)  # 5 questions in the 10 s of answering: 5 left take 10 s more
    assert "ETA 0:00:10," in tracker.heartbeat()  # not 30 s (5 questions per 30 s elapsed)
    tracker.close()


def test_a_resumed_start_stays_out_of_the_rate() -> None:
    table = ingesting.IngestTable()
    table.update("tuned", "c1", 40, 50, 30)  # resumed mid-conversation: no exchange yet
    assert table.line().endswith("tuned c1 40/50 exchanges, 30 facts; ingest ETA unknown")


def test_tracker_heartbeat_shows_ingestion_from_many_threads() -> None:
    tracker = Tracker(16, show=False, heartbeat_s=0, workers=1)
    assert "ingesting" not in tracker.heartbeat()

    def lane(unit: str) -> None:
        for done in range(0, 6):
            tracker.ingesting("neuromorphic", unit, done, 10, done * 2)

    threads = [threading.Thread(target=lane, args=(f"u{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    line = tracker.heartbeat()
    assert line.startswith("heartbeat: 0/16 questions (0%)")
    assert "; ingesting 4 unit(s): neuromorphic u0 5/10 exchanges, 10 facts;" in line
    assert "; and 1 more; ingest ETA " in line  # 3 pairs named, the fourth counted
    tracker.close()


def _arm(store: Path, reports: list[Report]) -> NeuromorphicArm:
    def hear(*report: int | str) -> None:
        reports.append(report)  # type: ignore[arg-type]

    services = ArmServices(HashEmbedder(), TokenCounter(), store, store, progress=hear)
    return NeuromorphicArm("neuromorphic", NeuromorphicConfig(flush_every=4), services)


def test_neuromorphic_reports_each_exchange_and_a_resumed_start(tmp_path: Path) -> None:
    conv = sample_conversation()
    reports: list[Report] = []
    arm = _arm(tmp_path / "clean", reports)
    stats = arm.ingest(conv)
    arm.close()
    total = stats["exchanges_total"]
    assert [r[2] for r in reports] == list(range(total + 1))  # the start, then each exchange
    assert {r[:2] for r in reports} == {("neuromorphic", "conv-x")}
    assert {r[3] for r in reports} == {total}
    assert reports[-1][4] == stats["facts"] > 0
    resumed: list[Report] = []
    stopped: list[Report] = []
    crashed = _arm(tmp_path / "crashed", stopped)
    crashed.extractor = Exploding(at_call=11)
    with pytest.raises(RuntimeError):
        crashed.ingest(conv)
    crashed.close()
    assert stopped[-1][2:4] == (10, 10)  # a failed ingestion ends its entry
    again = _arm(tmp_path / "crashed", resumed)
    again.ingest(conv)
    again.close()
    assert resumed[0][2] == 8 and resumed[-1][2] == total  # from the last flush on


def test_bar_lines_go_through_tqdm_and_the_log_file_keeps_them(tmp_path: Path) -> None:
    root = logging.getLogger()
    console = logging.StreamHandler(sys.stderr)
    file = logging.FileHandler(tmp_path / "run.log", encoding="utf-8")
    root.addHandler(console)
    root.addHandler(file)
    try:
        tracker = Tracker(2, show=True, heartbeat_s=0, workers=1)
        assert console not in root.handlers and file in root.handlers  # console via tqdm
        logging.getLogger("bench.run").warning("a line above the bar")
        tracker.close()
        assert console in root.handlers  # given back
    finally:
        root.removeHandler(console)
        root.removeHandler(file)
        file.close()
    assert "a line above the bar" in (tmp_path / "run.log").read_text(encoding="utf-8")


def _last_heartbeat(log: Path) -> str:
    lines = [line for line in log.read_text().splitlines() if "heartbeat:" in line]
    return lines[-1].split("heartbeat: ", 1)[1]


@pytest.mark.slow
def test_predict_and_evaluate_count_questions_in_run_log(tmp_path: Path) -> None:
    """The log is `<out>/run.log`, the file the S3 mirror never pulls over."""
    out = tmp_path / "run"
    common = ("dataset=smoke", "arms=[raw]", "progress=false", f"out={out}")
    done = run_cli(*common, "phase=predict")
    assert done.returncode == 0, done.stderr[-2000:]
    log = out / "run.log"
    assert log.name in NEVER_SYNCED and not list(out.glob("__main__*"))
    assert _last_heartbeat(log).startswith("16/16 questions (100%)")
    done = run_cli(*common, "phase=evaluate")
    assert done.returncode == 0, done.stderr[-2000:]
    assert _last_heartbeat(log).startswith("16/16 questions (100%)")


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["-m", "a=1"], ["-m", "x=1", "a=1"]),
        (["a=1", "-m"], ["x=1", "a=1", "-m"]),
        (["--cfg", "job"], ["--cfg", "job", "x=1"]),
        ([], ["x=1"]),
    ],
)
def test_added_overrides_join_the_users_run_of_overrides(args, expected) -> None:
    """Hydra parses overrides as one run of positionals: `-m a=1` must stay parseable."""
    from bench.run.settings import with_overrides

    assert with_overrides(args, ["x=1"]) == expected


def test_units_side_by_side_report_their_ingestion(tmp_path: Path, monkeypatch) -> None:
    """With an LLM extractor the units ingest in lanes; each lane's arm reports to the run."""
    from bench.run.pipeline import run_benchmark
    from tests.run.test_lanes import compose_cfg
    from tests.support.fault_server import FaultServer

    heard: list[tuple[str, str, int, int, str]] = []
    real = Tracker.ingesting

    def spy(self: Tracker, arm: str, unit: str, done: int, total: int, facts: int) -> None:
        heard.append((arm, unit, done, total, threading.current_thread().name))
        real(self, arm, unit, done, total, facts)

    monkeypatch.setattr(Tracker, "ingesting", spy)
    with FaultServer() as server:
        overrides = [
            "dataset=smoke",
            f"out={tmp_path}",
            "progress=false",
            "provider=llamacpp",
            "arms=[neuromorphic]",
            f"provider.answerer.base_url={server.base_url}",
            "provider.extractor.concurrency=2",
            "provider.cache.mode=off",
        ]
        cfg = compose_cfg(overrides)
        assert run_benchmark(cfg).errors == 0
    finished = {(arm, unit) for arm, unit, done, total, _ in heard if done == total}
    assert finished == {("neuromorphic", "smoke-1"), ("neuromorphic", "smoke-2")}
    assert {name.split("_")[0] for *_, name in heard} == {"unit-lane"}


class _Heard(Tracker):
    """A tracker keeping every ingestion report it is given."""

    def __init__(self, total: int) -> None:
        super().__init__(total, show=False, heartbeat_s=0, workers=2)
        self.heard: list[tuple[str, str, int, int]] = []

    def ingesting(self, arm: str, unit: str, done: int, total: int, facts: int) -> None:
        self.heard.append((arm, unit, done, total))
        super().ingesting(arm, unit, done, total, facts)


def neuromorphic_smoke_tasks(out: Path) -> list[Any]:
    """One `UnitTask` per smoke conversation, neuromorphic only (it reports per exchange)."""
    from bench.answer.answer_prompt import load_answer_prompt
    from bench.config import ProviderConfig, RunConfig
    from bench.loaders import load_dataset
    from bench.run.scale.unit_task import UnitTask
    from bench.run.scale.units import units_of
    from tests.run.test_scale import load_dataset_cfg

    cfg = RunConfig(
        dataset=load_dataset_cfg(),
        provider=ProviderConfig(),
        arms=["neuromorphic"],
        arm_options={"neuromorphic": {"kind": "neuromorphic"}},
        out=str(out),
        progress=False,
    )
    units = units_of(load_dataset(cfg.dataset).conversations)
    prompt = load_answer_prompt(cfg.answer.prompt)
    return [UnitTask(cfg, prompt, unit, str(out), {}) for unit in units]


@pytest.mark.slow
def test_worker_processes_send_their_ingestion_to_the_parent(tmp_path: Path) -> None:
    from bench.run.scale.executor import run_in_processes

    tasks = neuromorphic_smoke_tasks(tmp_path)
    tracker = _Heard(sum(t.unit.questions for t in tasks))
    run_in_processes(tasks, 2, tracker)
    tracker.close()
    finished = {(arm, unit) for arm, unit, done, total in tracker.heard if done == total}
    assert finished == {("neuromorphic", t.unit.unit_id) for t in tasks}
    assert "ingesting" not in tracker.heartbeat()  # every unit left the table


def test_a_throttle_sends_first_last_and_one_report_per_interval() -> None:
    """A Ray task's ingestion reports: 10,000 exchanges in 10 s make 21 calls, not 10,000."""
    throttle = ingesting.ReportThrottle(every_s=0.5)
    sent = [d for d in range(10_001) if throttle.due("arm", "c1", d, 10_000, d / 1000)]
    assert sent[:3] == [0, 500, 1000] and sent[-1] == 10_000 and len(sent) == 21
    assert throttle.due("arm", "c2", 0, 5, 0.0)  # another pair has its own clock
    assert not throttle.due("arm", "c2", 1, 5, 0.1)
    assert throttle.due("arm", "c2", 5, 5, 0.2)  # the last always goes, even early
    assert throttle.due("arm", "c2", 0, 5, 0.3)  # and forgets the pair: a retry starts anew
