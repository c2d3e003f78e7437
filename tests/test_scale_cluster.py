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


def test_two_tasks_share_one_limiter_actor(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two concurrent tasks on one capped deployment: one actor admits their requests.

    Cap 3 requests per 1.5 s window. With a limiter per task, each would admit its
    first three at once (six within milliseconds); the actor admits the fourth only a
    full window after the first, over both tasks' requests together.
    """
    import ray

    from bench.scale.ray_limiter import actor_name, kill_limiters

    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    ray.init(num_cpus=2, _node_ip_address="127.0.0.1", include_dashboard=False, log_to_driver=False)
    try:
        node = ray.get_runtime_context().get_node_id()
        url, model, cap, window = "http://127.0.0.1:9/v1", "m", 3, 1.5

        @ray.remote
        def client(requests: int) -> int:
            import os

            from bench.scale.ray_limiter import ray_limiters

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
