"""`executor=ray` on a real local Ray cluster (head + one worker node on 127.0.0.1).

Needs the `ray` extra (`pip install -e '.[ray]'`); skipped without it. CI runs these in
their own step (`pytest -m cluster`). The cluster is started and stopped through
`ray.cluster_utils.Cluster`, which owns (and kills) exactly the processes it started.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e_support import ROOT, load_records, run_cli, strip_timings

pytestmark = pytest.mark.cluster
ray_utils = pytest.importorskip("ray.cluster_utils", reason="needs the ray extra: .[ray]")

QUIET = ("progress=false", "heartbeat_s=0")
DATA = Path(os.environ.get("BENCH_DATA_DIR", "/nonexistent")) / "locomo10.json"


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """A head node with no CPUs (so every task runs on the worker) and one 2-CPU worker."""
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    head = {"num_cpus": 0, "include_dashboard": False, "node_ip_address": "127.0.0.1"}
    made = ray_utils.Cluster(initialize_head=True, connect=False, head_node_args=head)
    made.add_node(num_cpus=2, node_ip_address="127.0.0.1")
    made.wait_for_nodes()
    yield made
    made.shutdown()


def _same_records(a: Path, b: Path) -> None:
    left, right = load_records(a), load_records(b)
    assert sorted(left) == sorted(right) and left
    for qid in left:
        assert strip_timings(left[qid]) == strip_timings(right[qid]), qid


def _ray_run(cluster: Any, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*QUIET, f"out={out}", "executor=ray", f"ray.address={cluster.address}", *extra)


@pytest.mark.skipif(not DATA.is_file(), reason="LoCoMo not in BENCH_DATA_DIR")
def test_locomo_slice_on_ray_equals_a_local_run(cluster: Any, tmp_path: Path) -> None:
    slice_ = ("dataset=locomo", f"dataset.path={DATA}", "limit.conversations=2")
    local = run_cli(*QUIET, *slice_, f"out={tmp_path / 'local'}")
    assert local.returncode == 0, local.stderr[-2000:]
    remote = _ray_run(cluster, tmp_path / "ray", *slice_)
    assert remote.returncode == 0, remote.stderr[-2000:]
    _same_records(tmp_path / "local", tmp_path / "ray")


def test_killing_the_worker_mid_run_then_rerunning_loses_and_duplicates_nothing(
    cluster: Any, tmp_path: Path
) -> None:
    reference = run_cli(*QUIET, "dataset=smoke", f"out={tmp_path / 'local'}")
    assert reference.returncode == 0, reference.stderr[-2000:]
    out = tmp_path / "ray"
    args = [*QUIET, "dataset=smoke", f"out={out}", "executor=ray"]
    args += [f"ray.address={cluster.address}", "ray.max_retries=0"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "bench.run", *args],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    worker = next(n for n in cluster.worker_nodes)
    deadline = time.monotonic() + 240
    while not list((out / "stores").glob("*/*")) and time.monotonic() < deadline:
        time.sleep(0.2)  # wait until a task is ingesting on the worker
    cluster.remove_node(worker)  # kills the worker node's raylet and its task processes
    cluster.add_node(num_cpus=2, node_ip_address="127.0.0.1")
    _, err = proc.communicate(timeout=300)
    assert proc.returncode in (0, 1), err[-2000:]
    rerun = _ray_run(cluster, out, "dataset=smoke")
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    files = sorted(p.name for p in (out / "questions").glob("*.json"))
    assert len(files) == len(set(files)) == 16
    _same_records(tmp_path / "local", out)
