"""The arms of one unit ingest concurrently; their shared extraction calls are sent once.

- `ingest_arms` with `concurrency` > 1 runs arms at the same time, yet returns failures,
  logs and extraction health in arm order, exactly as a serial ingestion does;
- a neuromorphic + tuned run with the LLM extractor against the fault server (cache
  off, so only single-flight can share) sends each distinct extraction request once,
  and its records and health equal a serial run's.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hydra import compose, initialize_config_dir

from bench.paths import CONF_DIR
from bench.run.ingest import ingest_arms
from bench.types import Context, Conversation, Question
from tests.support.e2e_support import load_records, strip_timings
from tests.support.fault_server import Fault, FaultServer


class _Arm:
    """An arm whose ingestion waits at a shared barrier (a serial ingestion would hang)."""

    def __init__(self, name: str, barrier: threading.Barrier, fail: bool = False) -> None:
        self.name, self.barrier, self.fail = name, barrier, fail

    def fingerprint(self) -> dict[str, Any]:
        return {"kind": self.name}

    def ingest(self, conversation: Conversation) -> dict[str, Any]:
        self.barrier.wait(timeout=5)
        if self.fail:
            raise RuntimeError(f"{self.name} broke")
        return {"exchanges": 3, "exchanges_failed": 0, "facts": len(self.name)}

    def retrieve(self, question: Question) -> Context:
        raise NotImplementedError

    def close(self) -> None:
        pass


def test_arms_ingest_at_once_and_report_in_arm_order(caplog: pytest.LogCaptureFixture) -> None:
    barrier = threading.Barrier(3)
    arms = {n: _Arm(n, barrier, fail=n == "b") for n in ("c", "b", "a")}
    conversation = Conversation("conv-1", ("A", "B"), ())
    health: dict[str, Any] = {}
    with caplog.at_level(logging.INFO, logger="bench.run"):
        failed = ingest_arms(arms, conversation, health, concurrency=3)  # type: ignore[arg-type]
    assert failed == {"b": "ingest failed: RuntimeError: b broke"}
    lines = [r.getMessage().split(" ")[:2] for r in caplog.records if r.name == "bench.run"]
    assert lines == [["ingest", "c/conv-1"], ["ingest", "b/conv-1"], ["ingest", "a/conv-1"]]
    assert list(health) == ["c", "a"]  # arm order, not the order the threads finished
    assert health["c"]["conv-1"].facts == 1


def _overrides(base_url: str, out: Path, concurrency: int) -> list[str]:
    return [
        "dataset=smoke",
        "limit.conversations=1",
        f"out={out}",
        "progress=false",
        "provider=llamacpp",
        "arms=[neuromorphic,tuned]",
        f"provider.answerer.base_url={base_url}",
        "provider.answerer.concurrency=4",
        f"provider.extractor.concurrency={concurrency}",
        "provider.cache.mode=off",  # nothing stored: only single-flight can share a call
    ]


def _run(base_url: str, out: Path, concurrency: int) -> None:
    from bench.run.pipeline import run_benchmark
    from bench.run.settings import load_run_config

    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = load_run_config(
            compose(config_name="config", overrides=_overrides(base_url, out, concurrency))
        )
    assert run_benchmark(cfg).errors == 0


def _extractions(server: FaultServer) -> Counter[str]:
    bodies = [
        r.body for r in server.requests if "update_memory" in r.tools or r.schema == "update_memory"
    ]
    return Counter(json.dumps(b, sort_keys=True) for b in bodies)


@pytest.mark.slow
def test_two_arms_send_each_extraction_once_and_write_a_serial_runs_records(tmp_path: Path) -> None:
    with FaultServer() as server:
        server.always(Fault.slow(0.02))  # a server takes time: the arms' twins overlap
        _run(server.base_url, tmp_path / "serial", 1)
        serial = _extractions(server)
        server.clear_log()
        _run(server.base_url, tmp_path / "concurrent", 4)
        concurrent = _extractions(server)
    assert serial and set(serial.values()) == {2}  # one after another: every call twice
    assert set(concurrent) == set(serial)
    assert set(concurrent.values()) == {1}  # each distinct request sent once
    records = {k: strip_timings(v) for k, v in load_records(tmp_path / "serial").items()}
    again = {k: strip_timings(v) for k, v in load_records(tmp_path / "concurrent").items()}
    assert again == records and records
    health = [
        json.loads((tmp_path / r / "run.json").read_text())["extraction_health"]
        for r in ("serial", "concurrent")
    ]
    assert health[0] == health[1] and set(health[0]) == {"neuromorphic", "tuned"}


_INTERRUPTED_INGEST = """
import signal, sys, threading, time
from bench.run.ingest import ingest_arms
from bench.types import Conversation

# A child inherits its parent's signal mask and ignored signals: SIGINT as a shell gives
# it, whatever earlier tests left in the pytest process (said on stderr if it differed).
blocked = signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, [])
inherited = (blocked, signal.getsignal(signal.SIGINT))
if inherited != (False, signal.default_int_handler):
    sys.stderr.write(f"inherited SIGINT state: blocked, handler = {inherited}\\n")
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
signal.signal(signal.SIGINT, signal.default_int_handler)

said = threading.Lock()  # two threads' lines must not interleave

def say(line):
    with said:
        sys.stdout.write(line + "\\n")
        sys.stdout.flush()

class Slow:
    def __init__(self, name):
        self.name = name
    def ingest(self, conversation):
        try:
            say(f"ingesting {self.name}")  # inside the try: an interrupt from now on is seen
            while True:  # one exchange after another, as an extracting arm does
                time.sleep(0.01)
        except KeyboardInterrupt:
            say(f"aborted {self.name}")
            raise

arms = {n: Slow(n) for n in ("a", "b")}
try:
    ingest_arms(arms, Conversation("c", ("A",), ()), {}, concurrency=2)
except KeyboardInterrupt:
    say("interrupted")
    sys.exit(130)
"""


def test_ctrl_c_aborts_every_arm_ingesting_at_once() -> None:
    """SIGINT once both arms say they are ingesting: each is aborted, then the caller.

    Load-independent: the signal waits for the arms' own lines (not a sleep), and the
    only time limit is a hang guard that kills the child after 120 s.
    """
    import signal
    import subprocess
    import sys

    from tests.support.e2e_support import ROOT

    proc = subprocess.Popen(
        [sys.executable, "-c", _INTERRUPTED_INGEST],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    guard = threading.Timer(120, proc.kill)  # a hang guard, not a timing assumption
    guard.start()
    try:
        assert proc.stdout is not None
        started = {proc.stdout.readline().strip(), proc.stdout.readline().strip()}
        assert started == {"ingesting a", "ingesting b"}
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate()  # a pool would wait for the arms forever
    finally:
        guard.cancel()
    assert proc.returncode == 130, out
    assert sorted(out.split("\n")[:2]) == ["aborted a", "aborted b"]
    assert out.split("\n")[2] == "interrupted"


_SIGNAL_IN_A_CALLS_THREAD = _INTERRUPTED_INGEST.replace(
    """            say(f"ingesting {self.name}")  # inside the try: an interrupt from now on is seen
""",
    """            say(f"ingesting {self.name}")  # inside the try: an interrupt from now on is seen
            both.wait()
            if self.name == "a":  # the kernel may pick any thread for a process's SIGINT
                import signal
                signal.pthread_kill(threading.get_ident(), signal.SIGINT)
""",
).replace("said = threading.Lock()", "both = threading.Barrier(2)\nsaid = threading.Lock()")


def test_ctrl_c_delivered_to_an_arms_thread_still_aborts_every_arm() -> None:
    """SIGINT received by one of the arms' threads: Python runs the handler in the main
    thread, which must not sleep in an untimed wait for calls that never end (it did:
    the run hung, nothing aborted). The 120 s limit is a hang guard, not a timing."""
    import subprocess
    import sys

    from tests.support.e2e_support import ROOT

    assert "pthread_kill" in _SIGNAL_IN_A_CALLS_THREAD  # the variant was built
    proc = subprocess.run(
        [sys.executable, "-c", _SIGNAL_IN_A_CALLS_THREAD],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = proc.stdout.split("\n")
    assert proc.returncode == 130, (proc.stdout, proc.stderr)
    assert sorted(lines[:2]) == ["ingesting a", "ingesting b"]
    assert sorted(lines[2:4]) == ["aborted a", "aborted b"] and lines[4] == "interrupted"
