"""`executor=ray` on real Ray clusters on 127.0.0.1: private, and head + worker node.

Needs the `ray` extra (`pip install -e '.[ray]'`); skipped without it. CI runs it in its
own step (`pytest -m cluster`). Every test starts and stops its own cluster.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.run.scale.tracker import Tracker
from tests.support.e2e_support import (
    ROOT,
    load_records,
    run_cli,
    strip_timings,
    two_conversation_slice,
)

pytestmark = pytest.mark.cluster
pytest.importorskip("ray", reason="needs the ray extra: .[ray]")

QUIET = ("progress=false", "heartbeat_s=0")
SLICE = two_conversation_slice()
"""LoCoMo's first two conversations (smoke without the data): see e2e_support."""


NO_AUTH = {"RAY_AUTH_MODE": "disabled"}


def _same_records(a: Path, b: Path) -> None:
    left, right = load_records(a), load_records(b)
    assert sorted(left) == sorted(right) and left
    for qid in left:
        assert strip_timings(left[qid]) == strip_timings(right[qid]), qid


@pytest.fixture(scope="module")
def local_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("local") / "run"
    done = run_cli(*QUIET, *SLICE, f"out={out}")
    assert done.returncode == 0, done.stderr[-2000:]
    return out


def test_smoke_on_a_private_local_cluster_equals_a_local_run(
    local_run: Path, tmp_path: Path
) -> None:
    remote = run_cli(
        "progress=false",  # the heartbeat stays on: its last line is checked below
        *SLICE,
        f"out={tmp_path / 'ray'}",
        "executor=ray",
        "ray.address=local",
        "ray.num_cpus=2",
        env={"RAY_AUTH_MODE": "disabled"},
    )
    assert remote.returncode == 0, remote.stderr[-2000:]
    assert f"{len(load_records(local_run))} records written" in remote.stderr
    _same_records(local_run, tmp_path / "ray")
    log = (tmp_path / "ray" / "run.log").read_text(encoding="utf-8").splitlines()
    peaks = [line for line in log if "peak resident memory" in line]  # each task's own
    assert len(peaks) == 2 and all("(its own)" in line for line in peaks), peaks
    beats = [line for line in log if "heartbeat: " in line]  # the last, at close
    assert beats[-1].endswith(", 0 Ray task(s) running, cluster 2 CPU(s)"), beats


class _Watched(Tracker):
    """A tracker keeping the ingestion reports and parallelism texts it is given."""

    def __init__(self, total: int) -> None:
        super().__init__(total, show=False, heartbeat_s=0, workers=1)
        self.heard: list[tuple[str, str, int, int]] = []
        self.shown: list[str] = []

    def ingesting(self, arm: str, unit: str, done: int, total: int, facts: int) -> None:
        self.heard.append((arm, unit, done, total))
        super().ingesting(arm, unit, done, total, facts)

    def parallelism(self, text: str) -> None:
        self.shown.append(text)
        super().parallelism(text)


def test_ray_tasks_relay_their_ingestion_and_the_heartbeat_names_ray_tasks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ray tasks' ingestion reaches the driver's tracker (each pair's first and last report
    at least), and the heartbeat counts Ray tasks, not `1 worker(s)`. Both used to be
    missing: a 10M-token Ray run said `0/800 questions ..., ETA unknown, 1 worker(s)` for
    minutes while its units were being ingested."""
    from bench.config import RayConfig
    from bench.run.scale.ray_exec import run_on_ray
    from tests.run.test_run_progress import neuromorphic_smoke_tasks

    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    tasks = neuromorphic_smoke_tasks(tmp_path)
    tracker = _Watched(sum(t.unit.questions for t in tasks))
    results = run_on_ray(tasks, RayConfig(address="local", num_cpus=2), tracker)
    tracker.close()
    assert sum(r.errors for r in results) == 0
    units = {t.unit.unit_id for t in tasks}
    starts = {unit for _, unit, done, total in tracker.heard if done < total}
    ends = {unit for _, unit, done, total in tracker.heard if done == total}
    assert starts == ends == units, tracker.heard
    assert any(
        re.fullmatch(r"[12] Ray task\(s\) running, cluster 2 CPU\(s\)", s) for s in tracker.shown
    )
    line = tracker.heartbeat()
    assert line.endswith(", 0 Ray task(s) running, cluster 2 CPU(s)") and "worker" not in line


def test_a_permanent_failure_stops_a_ray_run_without_retries(tmp_path: Path) -> None:
    """HTTP 404 (no such model): exit 2 in one line, no record; it used to be re-run by Ray
    `ray.max_retries` times, then written as `error` records (exit 1)."""
    from tests.support.fault_server import Fault, FaultServer

    with FaultServer() as server:
        server.always(Fault.http(404, message="The model `gpt-9` does not exist"))
        proc = run_cli(
            *QUIET,
            *SLICE,
            f"out={tmp_path / 'ray'}",
            "arms=[raw]",
            "provider=openai",
            f"provider.answerer.base_url={server.base_url}",
            "executor=ray",
            f"provider.embedder.base_url={server.base_url}",
            "provider.embedder.model=fault-wordllama",
            "ray.address=local",
            "ray.num_cpus=2",
            env={**NO_AUTH, "OPENAI_API_KEY": "sk-x"},
        )
    line = proc.stderr.strip().splitlines()[-1]
    assert proc.returncode == 2 and line.startswith("error: ") and "HTTP 404" in line, line
    assert not list((tmp_path / "ray").glob("questions/*.json"))


def test_two_tasks_share_one_limiter_actor(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two concurrent tasks on one capped deployment: one actor admits their requests.

    Cap 3 requests per 1.5 s window. With a limiter per task, each would admit its
    first three at once (six within milliseconds); the actor admits the fourth only a
    full window after the first, over both tasks' requests together.
    """
    import ray

    from bench.run.scale.ray_limiter import actor_name, kill_limiters

    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    ray.init(num_cpus=2, _node_ip_address="127.0.0.1", include_dashboard=False, log_to_driver=False)
    try:
        node = ray.get_runtime_context().get_node_id()
        url, model, cap, window = "http://127.0.0.1:9/v1", "m", 3, 1.5

        @ray.remote
        def client(requests: int) -> int:
            import os

            from bench.run.scale.ray_limiter import ray_limiters

            limiter = ray_limiters(node)(url, model, cap, None, window)
            for _ in range(requests):
                limiter.settle(limiter.acquire(10), 10)
            return os.getpid()

        pids = ray.get([client.remote(6), client.remote(6)])
        assert len(set(pids)) == 2  # two worker processes, one limiter
        actor = ray.get_actor(actor_name(url, model))
        granted = sorted(ray.get(actor.granted.remote()))
        assert len(granted) == 12
        spans = [granted[i + cap] - granted[i] for i in range(len(granted) - cap)]
        assert min(spans) >= window - 1e-6, spans
        assert kill_limiters(ray) == 1
    finally:
        ray.shutdown()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _ray_node(*args: str, log: Path) -> subprocess.Popen[bytes]:
    """`ray start ... --block` in its own session: its process group is the whole node."""
    ray = Path(sys.executable).with_name("ray")
    with log.open("wb") as sink:
        return subprocess.Popen(
            [
                str(ray),
                "start",
                "--block",
                "--node-ip-address=127.0.0.1",
                "--num-cpus=1",
                "--disable-usage-stats",
                *args,
            ],
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={**os.environ, **NO_AUTH},
        )


def _stop(node: subprocess.Popen[bytes]) -> None:
    """End a node's whole process group (ours only: never `ray stop`, which ends every
    Ray process of this user on the machine)."""
    for sig, wait in ((signal.SIGTERM, 15), (signal.SIGKILL, 5)):
        try:
            os.killpg(node.pid, sig)
        except ProcessLookupError:
            return
        try:
            node.wait(timeout=wait)
            time.sleep(1)  # let the group's other members go too
        except subprocess.TimeoutExpired:
            continue
    with contextlib.suppress(ProcessLookupError):
        os.killpg(node.pid, signal.SIGKILL)  # stragglers of an exited leader


def _alive_nodes(address: str) -> int:
    code = (
        f"import ray; ray.init(address={address!r}, log_to_driver=False); "
        "print(sum(n['Alive'] for n in ray.nodes()))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **NO_AUTH},
    )
    return int(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 else 0


@pytest.fixture
def head_and_worker(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A head node and one worker node on 127.0.0.1 (1 CPU each); stopped afterwards."""
    port = _free_port()
    temp = Path("/tmp") / f"rk{os.getpid()}-{port}"  # socket paths must stay short
    nodes = [
        _ray_node(
            "--head",
            f"--port={port}",
            "--include-dashboard=false",
            f"--temp-dir={temp}",
            log=tmp_path / "head.log",
        )
    ]
    address = f"127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while _alive_nodes(address) < 1:
            assert time.monotonic() < deadline, (tmp_path / "head.log").read_text()[-2000:]
            time.sleep(2)
        nodes.append(_ray_node(f"--address={address}", log=tmp_path / "worker.log"))
        while _alive_nodes(address) < 2:
            assert time.monotonic() < deadline, (tmp_path / "worker.log").read_text()[-2000:]
            time.sleep(2)
        yield address, nodes[1]
    finally:
        for node in reversed(nodes):
            _stop(node)


def test_killing_the_worker_node_mid_run_loses_and_duplicates_nothing(
    head_and_worker: tuple[str, subprocess.Popen[bytes]], local_run: Path, tmp_path: Path
) -> None:
    address, worker = head_and_worker
    out = tmp_path / "ray"
    command = [
        sys.executable,
        "-m",
        "bench.run",
        *QUIET,
        *SLICE,
        f"out={out}",
        "executor=ray",
        f"ray.address={address}",
    ]
    env = {**os.environ, **NO_AUTH, "HYDRA_FULL_ERROR": "0"}
    run = subprocess.Popen(command, cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
    questions = out / "questions"
    deadline = time.monotonic() + 300
    while not (questions.is_dir() and any(questions.glob("*.json"))):
        assert run.poll() is None, run.communicate()[1][-2000:]
        assert time.monotonic() < deadline
        time.sleep(0.2)
    written_at_kill = len(list(questions.glob("*.json")))
    os.killpg(worker.pid, signal.SIGKILL)  # the worker node, mid-run
    first_stderr = run.communicate(timeout=600)[1]
    total = len(load_records(local_run))
    assert written_at_kill < total, "the run had finished before the kill"
    assert run.returncode in (0, 1), first_stderr[-2000:]  # 1: a unit out of retries
    print(f"killed the worker at {written_at_kill}/{total}; first run exit {run.returncode}")

    again = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-2000:]
    files = sorted(questions.glob("*.json"))
    assert len(files) == total and not list(questions.glob(".*.tmp"))  # none lost or doubled
    _same_records(local_run, out)
