"""`executor=ray` on a real local Ray cluster on 127.0.0.1.

The private-cluster test (`ray.address=local`) runs in CI's cluster step; the LoCoMo
slice on a head + one worker node is also marked `slow` (minutes on two shared cores).

Needs the `ray` extra (`pip install -e '.[ray]'`); skipped without it. CI runs these in
their own step (`pytest -m cluster`). The cluster is started and stopped through
`ray.cluster_utils.Cluster`, which owns (and kills) exactly the processes it started.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e_support import load_records, run_cli, strip_timings

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


@pytest.mark.slow
@pytest.mark.skipif(not DATA.is_file(), reason="LoCoMo not in BENCH_DATA_DIR")
def test_locomo_slice_on_ray_equals_a_local_run(cluster: Any, tmp_path: Path) -> None:
    slice_ = ("dataset=locomo", f"dataset.path={DATA}", "limit.conversations=2")
    local = run_cli(*QUIET, *slice_, f"out={tmp_path / 'local'}")
    assert local.returncode == 0, local.stderr[-2000:]
    remote = _ray_run(cluster, tmp_path / "ray", *slice_)
    assert remote.returncode == 0, remote.stderr[-2000:]
    _same_records(tmp_path / "local", tmp_path / "ray")


def test_smoke_on_a_private_local_cluster_equals_a_local_run(tmp_path: Path) -> None:
    local = run_cli(*QUIET, "dataset=smoke", f"out={tmp_path / 'local'}")
    assert local.returncode == 0, local.stderr[-2000:]
    remote = run_cli(
        *QUIET, "dataset=smoke", f"out={tmp_path / 'ray'}", "executor=ray",
        "ray.address=local", "ray.num_cpus=2", env={"RAY_AUTH_MODE": "disabled"},
    )  # fmt: skip
    assert remote.returncode == 0, remote.stderr[-2000:]
    assert "16 records written" in remote.stderr
    _same_records(tmp_path / "local", tmp_path / "ray")
