"""`executor=ray`: each unit is a Ray task; the run directory must be shared storage.

Tasks run `run_unit` unchanged, so a unit's records equal a local run's. A task whose
worker dies or that raises is re-run by Ray up to `ray.max_retries` times (it resumes
from the records and ingestion checkpoints already written); after that its questions
become `error` results through `fail_unit`, exactly as a failed local unit. A permanent
failure (a rejected key, an unknown model) is not re-run: it stops the run, as locally.

Progress: tasks send `tick`s and their arms' ingestion progress to one progress actor;
the driver drains it every second into the tracker, so the bar and heartbeat show the
cluster's total and the units being ingested, as with `workers=N`. A task sends a pair's
first and last ingestion reports and the rest at most two a second (`ReportThrottle`),
so a long ingestion makes a few actor calls a second, not one per exchange. The
heartbeat's parallelism reads `N Ray task(s) running, cluster C CPU(s)`: N = tasks
whose body has started (each says so first) and whose result the driver has not yet
had (a task waiting for a retry still counts), C = `ray.cluster_resources()["CPU"]`.

Rate limits: tasks share one limiter actor per deployment (`bench.run.scale.ray_limiter`),
so the configured requests/tokens per minute hold for the whole cluster. The progress
and limiter actors are pinned to the driver's node, so losing a worker node loses only
the tasks that ran on it.

Response cache: every task opens the run's one SQLite cache (`<out>/cache/`), and
SQLite's file lock admits one writer at a time. That needs a filesystem with working
POSIX locks (local disk, one machine, or a cluster filesystem that supports them); on
NFS without locks, point `provider.cache.path` at node-local disk or set
`provider.cache.mode=off`. The offline default makes no cached calls.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from bench.config import RayConfig
from bench.errors import ConfigError, PermanentError, permanent_cause
from bench.run.outcome import UnitResult
from bench.run.scale.ingesting import ReportThrottle
from bench.run.scale.peak import measured
from bench.run.scale.tracker import Tracker
from bench.run.scale.unit_task import UnitTask, fail_unit, run_unit

log = logging.getLogger("bench.run")
_POLL_S = 1.0


def connect(cfg: RayConfig) -> Any:
    """Import Ray and join (or start) the cluster named by `ray.address`."""
    try:
        import ray
    except ImportError:
        raise ConfigError(
            "executor=ray: Ray is not installed; pip install 'armbench[ray]'"
        ) from None
    options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
    if cfg.address == "local":
        ray.init(num_cpus=cfg.num_cpus, _node_ip_address="127.0.0.1", **options)
    else:
        ray.init(address=cfg.address, **options)
    return ray


def ray_parallelism(running: int, cpus: float | None) -> str:
    """The heartbeat's parallelism under Ray: tasks running, then the cluster's CPUs if known."""
    tasks = f"{running} Ray task(s) running"
    return tasks if cpus is None else f"{tasks}, cluster {cpus:g} CPU(s)"


def run_on_ray(tasks: list[UnitTask], cfg: RayConfig, tracker: Tracker) -> list[UnitResult]:
    """Submit one task per unit, follow progress, turn spent retries into `error` results."""
    ray = connect(cfg)
    try:
        return _run(ray, tasks, cfg, tracker)
    finally:
        if cfg.address == "local":
            ray.shutdown()  # a private cluster lives as long as the run


def _run(ray: Any, tasks: list[UnitTask], cfg: RayConfig, tracker: Tracker) -> list[UnitResult]:
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    from bench.run.scale.ray_limiter import kill_limiters

    node = ray.get_runtime_context().get_node_id()  # the driver's: actors live here
    here = NodeAffinitySchedulingStrategy(node_id=node, soft=False)
    progress = ray.remote(num_cpus=0)(_Progress).options(scheduling_strategy=here).remote()
    remote = ray.remote(max_retries=cfg.max_retries, retry_exceptions=True)(_ray_unit)
    pending = {remote.remote(task, progress, node): task for task in tasks}
    try:
        return _follow(ray, pending, progress, tracker)
    finally:
        kill_limiters(ray)


def _follow(
    ray: Any, pending: dict[Any, UnitTask], progress: Any, tracker: Tracker
) -> list[UnitResult]:
    """Gather results as tasks finish; a task whose retries are spent becomes `error`."""
    results, relay = [], _Relay(ray, progress, tracker)
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1, timeout=_POLL_S)
        relay.drain()
        for ref in ready:
            task = pending.pop(ref)
            relay.ended(task.unit.unit_id)
            try:
                got = ray.get(ref)
            except Exception as exc:  # retries spent: the unit's questions become `error`
                message = f"unit {task.unit.unit_id} failed on Ray: {type(exc).__name__}"
                log.error("%s: %s", message, str(exc).splitlines()[0] if str(exc) else "")
                failed = fail_unit(task, message)
                tracker.tick(failed.questions, failed.errors, 0)
                got = failed
            if isinstance(got, PermanentError):  # the run stops: the other tasks end now
                for other in pending:
                    ray.cancel(other)
                raise got
            results.append(got)
    relay.drain()
    return results


class _Relay:
    """The driver's end of the progress actor: reports to the tracker, tasks running."""

    def __init__(self, ray: Any, progress: Any, tracker: Tracker) -> None:
        self._ray, self._progress, self._tracker = ray, progress, tracker
        self._started: set[str] = set()
        self._ended: set[str] = set()  # a set too: a unit's `started` may arrive after

    def drain(self) -> None:
        """Hand every report received so far to the tracker; show the tasks running."""
        for method, arguments in self._ray.get(self._progress.drain.remote()):
            if method == "started":
                self._started.add(arguments[0])
            else:
                self._tracker.relay(method, arguments)
        self._show()

    def ended(self, unit_id: str) -> None:
        """The driver has the unit's result (or its retries are spent)."""
        self._ended.add(unit_id)
        self._show()

    def _show(self) -> None:
        cpus = self._ray.cluster_resources().get("CPU")
        running = len(self._started - self._ended)
        self._tracker.parallelism(ray_parallelism(running, cpus))


def _ray_unit(task: UnitTask, progress: Any, node: str) -> UnitResult | PermanentError:
    """The Ray task body: run the unit, sending ticks and ingestion to the progress actor.

    `node` is the driver's node, where the run's limiter actors are created. A permanent
    failure (`bench.errors.PermanentError`) comes back as the value, so Ray does not
    re-run it; the driver cancels the other tasks and raises it (the run stops, exit 2).
    """
    from bench.run.scale.ray_limiter import ray_limiters

    throttle = ReportThrottle()
    progress.report.remote("started", (task.unit.unit_id,))

    def tick(done: int, errors: int, resumed: int) -> None:
        progress.report.remote("tick", (done, errors, resumed))

    def ingesting(arm: str, unit: str, done: int, total: int, facts: int) -> None:
        if throttle.due(arm, unit, done, total, time.monotonic()):
            progress.report.remote("ingesting", (arm, unit, done, total, facts))

    try:
        limiters = ray_limiters(node)
        return measured(lambda: run_unit(task, tick, limiters=limiters, progress=ingesting))
    except Exception as exc:
        cause = permanent_cause(exc)
        if cause is None:
            raise  # Ray re-runs the task (`ray.max_retries`)
        return cause  # returned, not raised: no retry can fix it, and the driver stops


class _Progress:
    """Ray actor collecting every task's reports: `(method, arguments)`, in order per task."""

    def __init__(self) -> None:
        self._items: list[tuple[str, tuple[Any, ...]]] = []

    def report(self, method: str, arguments: tuple[Any, ...]) -> None:
        """Queue one report: `started` (unit id), `tick` or `ingesting` (`Tracker.relay`)."""
        self._items.append((method, arguments))

    def drain(self) -> list[tuple[str, tuple[Any, ...]]]:
        """Hand over (and forget) every report received so far."""
        items, self._items = self._items, []
        return items
