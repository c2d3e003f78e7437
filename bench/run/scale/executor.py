"""Hand a run's units to an executor: this process, `workers=N` processes, or Ray.

The pipeline calls `plan_units` once; a plan that stays in process (one worker, local)
runs the conversations in the pipeline's own loop, as before. Otherwise `UnitPlan.run`
sends one `UnitTask` per unit to a pool of spawned processes (`workers=N`) or to Ray
(`executor=ray`), gathers their counts and costs, and turns a unit that could not run
into `error` results (`fail_unit`), so one bad unit never stops the others.

Shared between workers: the run directory (each question file has exactly one writer),
the response cache (one SQLite file; SQLite's lock makes it one writer at a time, and
its busy timeout lets other processes wait); each task has its own providers, arms and
stores. Rate limits: each of N local processes gets 1/N of every configured
requests/tokens-per-minute budget, so their sum never exceeds it; under Ray every task
asks one limiter actor per deployment (`bench.run.scale.ray_limiter`) instead.
"""

from __future__ import annotations

import logging
import multiprocessing
import threading
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, replace
from multiprocessing.synchronize import Event
from typing import Any, TypeVar

from bench.answer.answer_prompt import AnswerPrompt
from bench.config import EmbedderConfig, EndpointConfig, ExtractorConfig, RunConfig
from bench.errors import ConfigError, RunStopped, permanent_cause, raise_if_permanent
from bench.run.outcome import UnitResult
from bench.run.scale.peak import log_peaks, measured
from bench.run.scale.tracker import Tracker
from bench.run.scale.unit_task import UnitTask, fail_unit, run_unit
from bench.run.scale.units import Unit, parse_shard, resolve_workers, units_of
from bench.types import Dataset

log = logging.getLogger("bench.run")
EXECUTORS = ("local", "ray")
_E = TypeVar("_E", EndpointConfig, ExtractorConfig, EmbedderConfig)


@dataclass
class UnitPlan:
    """The units this process runs, how many workers, and the run's progress tracker."""

    cfg: RunConfig
    """The resolved run configuration (executor, shard, ray settings)."""
    units: list[Unit]
    """The units this process runs: the dataset's, restricted to its shard."""
    workers: int
    """Worker processes for the local executor (resolved, never 0)."""
    tracker: Tracker
    """The run's progress tracker; ticked per question, closed after the run."""

    @property
    def in_process(self) -> bool:
        """True when the pipeline's own serial loop runs the units.

        Never for `out=s3://`: a unit is pushed once its stores are closed (SQLite's WAL
        folded into the file), which `run_unit` guarantees and the serial loop, whose
        arms stay open across conversations, does not; `workers=1` then means one child.
        """
        local = self.cfg.executor == "local" and self.workers == 1
        return local and self.cfg.s3.uri is None

    def run(
        self, prompt: AnswerPrompt, run_dir: str, provenance: dict[str, Any]
    ) -> list[UnitResult]:
        """Run every unit out of process; results in unit order."""
        tasks = [UnitTask(self.cfg, prompt, u, run_dir, dict(provenance)) for u in self.units]
        if self.cfg.executor == "ray":
            from bench.run.scale.ray_exec import run_on_ray

            results = run_on_ray(tasks, self.cfg.ray, self.tracker)
        else:
            results = run_in_processes(tasks, self.workers, self.tracker)
        log_peaks(results)
        return sorted(results, key=lambda r: r.position)

    def close(self) -> None:
        """Stop the heartbeat and close the bar."""
        self.tracker.close()


def plan_units(cfg: RunConfig, dataset: Dataset) -> UnitPlan:
    """Split the dataset into units, apply `shard`, size the workers, start the tracker."""
    if cfg.executor not in EXECUTORS:
        raise ConfigError(f"executor={cfg.executor}: expected one of {list(EXECUTORS)}")
    units = units_of(dataset.conversations, parse_shard(cfg.shard))
    offline = cfg.provider.answerer.kind == "offline"
    workers = resolve_workers(cfg.workers, offline, max(1, len(units)), cfg.phase)
    total = sum(u.questions for u in units)
    tracker = Tracker(total, show=cfg.progress, heartbeat_s=cfg.heartbeat_s, workers=workers)
    if cfg.executor == "ray":  # `workers` is not what runs the units: Ray's tasks are
        from bench.run.scale.ray_exec import ray_parallelism

        tracker.parallelism(ray_parallelism(0, None))
    return UnitPlan(cfg, units, workers, tracker)


def run_in_processes(tasks: list[UnitTask], workers: int, tracker: Tracker) -> list[UnitResult]:
    """Run units in `workers` spawned processes, the longest conversations first.

    Spawned, not forked: the parent has LanceDB and tokenizer threads running, and a
    forked child would inherit their locks. Longest first (by turns, ties by position)
    keeps both cores busy until the end. The first permanent failure stops the run
    (`_child_run`): no unit starts after it, and this raises it once every worker is idle.
    """
    ctx = multiprocessing.get_context("spawn")
    queue: Any = ctx.Queue()
    stop = ctx.Event()
    drain = threading.Thread(target=_drain, args=(queue, tracker), daemon=True)
    drain.start()
    per_worker = [replace(t, cfg=split_quota(t.cfg, workers)) for t in tasks]
    order = sorted(per_worker, key=lambda t: t.unit.longest_first())
    results = []
    try:
        pool = ProcessPoolExecutor(
            workers, mp_context=ctx, initializer=_init, initargs=(queue, stop)
        )
        try:
            futures: dict[Future[UnitResult], UnitTask] = {
                pool.submit(_child_run, task): task for task in order
            }
            for future in as_completed(futures):
                results.append(_result_or_error(future, futures[future], tracker))
        except BaseException:
            stop.set()  # the workers' units under way end at their next step
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
    finally:
        queue.put(None)
        drain.join(timeout=10)
    return results


def split_quota(cfg: RunConfig, workers: int) -> RunConfig:
    """The config one of `workers` processes runs under: 1/N of every rate budget."""
    if workers <= 1:
        return replace(cfg, progress=False)
    p = cfg.provider
    judges = [replace(j, endpoint=_split(j.endpoint, workers)) for j in cfg.judges]
    provider = replace(
        p,
        answerer=_split(p.answerer, workers),
        extractor=_split(p.extractor, workers),
        embedder=_split(p.embedder, workers),
    )
    return replace(cfg, provider=provider, judges=judges, progress=False)


def _split(endpoint: _E, workers: int) -> _E:
    def share(budget: int | None) -> int | None:
        return None if budget is None else max(1, budget // workers)

    return replace(
        endpoint,
        requests_per_minute=share(endpoint.requests_per_minute),
        tokens_per_minute=share(endpoint.tokens_per_minute),
    )


def _result_or_error(future: Future[UnitResult], task: UnitTask, tracker: Tracker) -> UnitResult:
    """The unit's result, or its questions written as `error` when the worker failed."""
    try:
        return future.result()
    except Exception as exc:  # a dead or failing worker costs its unit, not the run
        raise_if_permanent(exc)  # unless no re-run could fix it: then it stops the run
        message = f"unit {task.unit.unit_id} failed: {type(exc).__name__}: {exc}"
        log.error(message)
        failed = fail_unit(task, message)
        tracker.tick(failed.questions, failed.errors, 0)
        return failed


_QUEUE: Any = None
_STOP: Any = None


def _init(queue: Any, stop: Event) -> None:
    """Child-process initialiser: remember the parent's progress queue and stop event."""
    global _QUEUE, _STOP
    _QUEUE, _STOP = queue, stop


def _child_run(task: UnitTask) -> UnitResult:
    """Run one unit in a child process, sending its ticks and ingestion progress to the parent.

    A permanent failure (`bench.errors.PermanentError`) stops the whole run, as in one
    process: the failing child sets the shared stop event before its error is sent, so
    a unit not yet started returns at once with nothing written, and a unit under way
    ends at its next record or ingestion step (`RunStopped`, as when a run's providers
    close: nothing marked complete). Records written before the stop are kept: each is
    complete, and a resume skips them.
    """
    if _STOP.is_set():
        return UnitResult(unit_id=task.unit.unit_id, position=task.unit.position)

    def tick(done: int, errors: int, resumed: int) -> None:
        _QUEUE.put(("tick", (done, errors, resumed)))
        _stop_point()

    def ingesting(arm: str, unit: str, done: int, total: int, facts: int) -> None:
        _QUEUE.put(("ingesting", (arm, unit, done, total, facts)))
        _stop_point()

    try:
        return measured(lambda: run_unit(task, tick, progress=ingesting))
    except RunStopped:
        return UnitResult(unit_id=task.unit.unit_id, position=task.unit.position)
    except Exception as exc:
        if permanent_cause(exc) is not None:
            _STOP.set()
        raise


def _stop_point() -> None:
    """Raise `RunStopped` once another unit's permanent failure has stopped the run."""
    if _STOP.is_set():
        raise RunStopped("another unit's permanent failure stopped the run")


def _drain(queue: Any, tracker: Tracker) -> None:
    """Hand the children's `(method, arguments)` messages to the tracker until None."""
    while (item := queue.get()) is not None:
        tracker.relay(*item)
