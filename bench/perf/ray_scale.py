"""`python -m bench.perf ray`: what `executor=ray` costs and gains on this machine.

- `ray_over_local`: wall time of the same run under `executor=ray` (a private cluster of
  `ray.num_cpus=2`, i.e. two tasks at once; its start-up included) over a local
  serial run (`workers=1`). Default run: full offline LoCoMo (`dataset=locomo`).
- `records_equal`: whether both runs wrote the same records, timings aside.
- Scheduling overhead, on a private cluster started in this process: the round trip of
  one empty task (submit, run, get; median of 200 sequential calls) and the amortised
  cost per empty task when 500 are submitted at once; plus the cluster's start-up.

Needs the `ray` extra. Machines are noisy: quote the ratio, measured within one call.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median

from bench.errors import BenchError
from bench.paths import PROJECT_ROOT

QUIET = ["progress=false", "heartbeat_s=0"]
RAY_ARGS = ["executor=ray", "ray.address=local", "ray.num_cpus=2"]


def ray_figures(overrides: list[str]) -> dict[str, object]:
    """The wall-time ratio, record equality and per-task scheduling overhead."""
    chosen = overrides or ["dataset=locomo"]
    with tempfile.TemporaryDirectory() as tmp:
        local_s = _run([*chosen, *QUIET, "workers=1", f"out={tmp}/local"])
        ray_s = _run([*chosen, *QUIET, *RAY_ARGS, f"out={tmp}/ray"])
        equal, questions = _records_equal(Path(tmp, "local"), Path(tmp, "ray"))
    return {
        "overrides": chosen,
        "questions": questions,
        "local_workers1_s": round(local_s, 2),
        "ray_2cpus_s": round(ray_s, 2),
        "ray_over_local": round(ray_s / local_s, 3),
        "records_equal": equal,
        **scheduling_overhead(),
    }


def scheduling_overhead(sequential: int = 200, batch: int = 500) -> dict[str, float]:
    """Cluster start, one empty task's round trip, and the amortised cost in a batch."""
    import ray

    started = time.perf_counter()
    ray.init(num_cpus=2, _node_ip_address="127.0.0.1", include_dashboard=False, log_to_driver=False)
    start_s = time.perf_counter() - started
    try:
        empty = ray.remote(_empty)
        ray.get([empty.remote() for _ in range(20)])  # warm the worker pool
        trips = []
        for _ in range(sequential):
            began = time.perf_counter()
            ray.get(empty.remote())
            trips.append(time.perf_counter() - began)
        began = time.perf_counter()
        ray.get([empty.remote() for _ in range(batch)])
        batch_s = time.perf_counter() - began
    finally:
        ray.shutdown()
    return {
        "ray_cluster_start_s": round(start_s, 2),
        "empty_task_round_trip_ms": round(median(trips) * 1000, 2),
        "empty_task_amortised_ms": round(batch_s / batch * 1000, 3),
    }


def _empty() -> None:
    """An empty Ray task."""


def _run(args: list[str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "bench.run", *args],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        env=None,
    )
    if done.returncode != 0:
        raise BenchError(f"bench.run {' '.join(args)} failed: {done.stderr[-500:]}")
    return time.perf_counter() - started


def _records_equal(a: Path, b: Path) -> tuple[bool, int]:
    """(same question ids and same records without timings/provenance, questions)."""
    left, right = _records(a), _records(b)
    return left == right, len(left)


def _records(run_dir: Path) -> dict[str, object]:
    out = {}
    for path in sorted((run_dir / "questions").glob("*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        record.pop("provenance", None)
        for result in record["arms"].values():
            result.pop("latency_ms", None)
            result.pop("retrieve_ms", None)
        out[record["question_id"]] = record
    return out
