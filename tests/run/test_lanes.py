"""Units side by side in one process (`bench.run.lanes`): at once, in order, own arms.

- `Lanes` runs units at the same time, each lane on its own arm set, starts them in a
  given order (longest first) and hands the results back in unit order; a unit's error
  is raised in its turn and later units do not start; every arm set is closed;
- once the providers close (the run stops), a lane's next model call raises RunStopped
  (never retried, never recorded as a failed call), so its arm aborts the ingestion;
- `unit_lanes` keeps the offline extractor, and phases other than `all`, serial;
- (slow) a three-arm run with the LLM extractor writes the records and run.json health
  of a serial run, whatever the order in which its units finished.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from hydra import compose, initialize_config_dir

from bench.paths import CONF_DIR
from bench.run.lanes import Lanes, unit_lanes
from bench.run.settings import load_run_config
from tests.support.e2e_support import load_records, strip_timings
from tests.support.fault_server import Fault, FaultServer


class _Arm:
    """Counts its closes; ingests nothing."""

    def __init__(self) -> None:
        self.closed = 0

    def close(self) -> None:
        self.closed += 1


def _sets() -> tuple[list[dict[str, Any]], Any]:
    made: list[dict[str, Any]] = []

    def open_set() -> dict[str, Any]:
        made.append({"arm": _Arm()})
        return made[-1]

    return made, open_set


def test_units_run_at_once_each_on_its_own_arms_and_come_back_in_order() -> None:
    barrier = threading.Barrier(2)  # two units must be in flight together, or this hangs
    seen: list[tuple[int, int]] = []
    made, open_set = _sets()

    def run_one(unit: int, arms: dict[str, Any]) -> int:
        if unit < 2:
            barrier.wait(timeout=5)
        seen.append((unit, id(arms)))
        return unit * 10

    lanes: Lanes[int, int] = Lanes(2, open_set, run_one)
    assert list(lanes.results([0, 1, 2, 3])) == [0, 10, 20, 30]
    lanes.close()
    assert len(made) == 2 and {a for _, a in seen} == {id(s) for s in made}
    first_two = {a for u, a in seen if u < 2}
    assert len(first_two) == 2  # the two units in flight together had different arm sets
    assert [s["arm"].closed for s in made] == [1, 1]


def test_a_units_error_is_raised_in_its_turn_and_later_units_do_not_start() -> None:
    started: list[int] = []
    made, open_set = _sets()

    def run_one(unit: int, arms: dict[str, Any]) -> int:
        started.append(unit)
        if unit == 1:
            raise RuntimeError("unit 1 broke")
        return unit

    lanes: Lanes[int, int] = Lanes(1, open_set, run_one)
    got: list[int] = []
    with pytest.raises(RuntimeError, match="unit 1 broke"):
        for result in lanes.results([0, 1, 2, 3]):
            got.append(result)
    lanes.close()
    assert got == [0] and started == [0, 1]  # a serial loop stops at the failing unit
    assert made[0]["arm"].closed == 1


def test_units_start_in_the_given_order_and_still_come_back_in_unit_order() -> None:
    started: list[int] = []
    _, open_set = _sets()

    def run_one(unit: int, arms: dict[str, Any]) -> int:
        started.append(unit)
        return unit

    lanes: Lanes[int, int] = Lanes(1, open_set, run_one)
    assert list(lanes.results([0, 1, 2, 3], start=lambda u: -u)) == [0, 1, 2, 3]
    assert started == [3, 2, 1, 0]  # e.g. the longest units first
    lanes.close()


class _Client:
    def __init__(self) -> None:
        self.requests, self.closed = 0, False

    def close(self) -> None:
        self.closed = True


def test_a_call_after_the_providers_closed_stops_its_thread_and_is_never_retried() -> None:
    from bench.errors import RunStopped
    from bench.providers.deployment import AttemptCounter, Deployment
    from bench.providers.ratelimit import SlidingWindowLimiter
    from bench.providers.retry import RetryPolicy

    client = _Client()
    deployment = Deployment(
        "http://127.0.0.1:9/v1",
        "m",
        client,
        SlidingWindowLimiter(None, None),
        2,
        RetryPolicy(max_attempts=5, backoff_base_s=0.01),
    )

    def request(c: _Client) -> int:
        c.requests += 1
        return c.requests

    counter = AttemptCounter()
    call = {"estimated_tokens": 1, "used_tokens": lambda _: None, "counter": counter}
    assert deployment.call("extractor", request, **call) == 1  # type: ignore[arg-type]
    deployment.close()
    with pytest.raises(RunStopped):  # not a ProviderError: no extraction records it
        deployment.call("extractor", request, **call)  # type: ignore[arg-type]
    assert client.closed and client.requests == 1 and counter.n == 1


def compose_cfg(overrides: list[str]) -> Any:
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return load_run_config(compose(config_name="config", overrides=overrides))


def test_lanes_follow_the_extractor_concurrency_and_stay_serial_offline() -> None:
    llm = ["provider=llamacpp", "provider.answerer.concurrency=4"]
    assert unit_lanes(compose_cfg(llm), 2) == 2  # at most one lane a unit
    assert unit_lanes(compose_cfg(llm), 10) == 4
    assert unit_lanes(compose_cfg([*llm, "provider.extractor.concurrency=1"]), 10) == 1
    assert unit_lanes(compose_cfg([*llm, "phase=predict"]), 10) == 1
    assert unit_lanes(compose_cfg([]), 10) == 1  # offline extractor: CPU under the GIL


def _run(base_url: str, out: Path, concurrency: int) -> None:
    from bench.run.pipeline import run_benchmark

    cfg = compose_cfg(
        [
            "dataset=smoke",
            f"out={out}",
            "progress=false",
            "provider=llamacpp",
            "arms=[neuromorphic,tuned,rag]",
            f"provider.answerer.base_url={base_url}",
            "provider.answerer.concurrency=4",
            f"provider.extractor.concurrency={concurrency}",
            "provider.cache.mode=off",
        ]
    )
    assert run_benchmark(cfg).errors == 0


@pytest.mark.slow
def test_units_side_by_side_write_a_serial_runs_records_and_health(tmp_path: Path) -> None:
    with FaultServer() as server:
        server.always(Fault.slow(0.02))
        _run(server.base_url, tmp_path / "serial", 1)
        _run(server.base_url, tmp_path / "lanes", 4)
    records = {k: strip_timings(v) for k, v in load_records(tmp_path / "serial").items()}
    again = {k: strip_timings(v) for k, v in load_records(tmp_path / "lanes").items()}
    assert again == records and len(records) == 16
    metas = [json.loads((tmp_path / r / "run.json").read_text()) for r in ("serial", "lanes")]
    for key in ("extraction_health", "retrieval_health"):
        assert metas[0][key] == metas[1][key] and metas[0][key]
