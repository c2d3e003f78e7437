"""`executor=ray` on a real private Ray cluster on 127.0.0.1 (`ray.address=local`).

Needs the `ray` extra (`pip install -e '.[ray]'`); skipped without it. CI runs it in its
own step (`pytest -m cluster`). The run starts and shuts down its own cluster.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e_support import load_records, run_cli, strip_timings

pytestmark = pytest.mark.cluster
pytest.importorskip("ray", reason="needs the ray extra: .[ray]")

QUIET = ("progress=false", "heartbeat_s=0")


def _same_records(a: Path, b: Path) -> None:
    left, right = load_records(a), load_records(b)
    assert sorted(left) == sorted(right) and left
    for qid in left:
        assert strip_timings(left[qid]) == strip_timings(right[qid]), qid


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
