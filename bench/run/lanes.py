"""Units side by side in one process: each lane is a thread with its own set of arms.

An arm whose extraction asks a model server one exchange at a time keeps one of the
server's slots busy: the prompt of an exchange holds the facts the store recalls for
it (`retrieve_during_ingest`), so exchange i+1 cannot be asked before exchange i is
stored. Independent units (conversations; LongMemEval questions) can: with `L` lanes,
up to `L` units ingest and answer at once, sharing the run's providers (rate limits,
concurrency slots and single-flight hold across lanes, `bench.providers`).

Each lane opens its own arms (an arm instance holds the state of the unit it is on,
e.g. `rag`'s current vectors) and runs units one after another as a serial run does;
every unit writes only its own question files and its own stores, so the records are a
serial run's (tests/run/test_lanes.py compares them). Each unit's tally and health start as
a copy of the run's entries for that unit and replace them when the unit is merged, in
unit order, so run.json is the serial run's too.

Stopping is cooperative (no exception is injected into a thread): once the caller stops
waiting (Ctrl-C, an error) or a unit fails, a shared `threading.Event` keeps every unit
not yet started from starting; a unit under way stops at its next model call once the
run's providers are closed (`RunStopped`, raised by `bench.providers.deployment`), its
arm aborting the store it was building, or else the run's interrupt watchdog ends the
process (`bench.run.interrupt`), which a resume undoes like a kill.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Generic, TypeVar

from bench.arm import Arm
from bench.config import RunConfig
from bench.run.ingest import ingest_concurrency

U = TypeVar("U")
R = TypeVar("R")
ArmSet = dict[str, Arm]


class NotStarted(Exception):
    """A unit skipped because the run stopped before its turn."""


def unit_lanes(cfg: RunConfig, units: int) -> int:
    """Lanes for `units` units: the extractor endpoint's concurrency, at most one a unit.

    1 (serial) with the offline extractor (CPU under the GIL: threads only add switching)
    and outside `phase=all` (predict and evaluate keep their serial loops).
    """
    if cfg.phase != "all":
        return 1
    return max(1, min(ingest_concurrency(cfg), units))


class Lanes(Generic[U, R]):
    """`lanes` threads, each with an arm set from `open_set`, running `run_one(unit, arms)`."""

    def __init__(
        self, lanes: int, open_set: Callable[[], ArmSet], run_one: Callable[[U, ArmSet], R]
    ) -> None:
        self._run_one = run_one
        self.lanes = max(1, lanes)
        """Lanes (threads, arm sets)."""
        self._sets: list[ArmSet] = []
        self._free: queue.SimpleQueue[ArmSet] = queue.SimpleQueue()
        self._stop = threading.Event()
        try:
            for _ in range(self.lanes):
                self._sets.append(open_set())
                self._free.put(self._sets[-1])
        except BaseException:
            self._close(self._sets)
            raise

    def results(self, units: Sequence[U], start: Callable[[U], Any] | None = None) -> Iterator[R]:
        """Each unit's result, in unit order, as soon as it and every earlier one are done.

        Units start in the order of the key `start` (default: unit order), e.g. longest
        first, so that the last lanes to finish are on short units. A unit's exception
        is raised here in its turn, after the units under way finished (as a serial loop
        stops at it; units not started by then never start). Any other way of leaving
        (an interrupt) does not wait: units not started never start.
        """
        pool = ThreadPoolExecutor(len(self._sets), "unit-lane")
        order = sorted(range(len(units)), key=lambda i: start(units[i])) if start else None
        submitted = {i: pool.submit(self._task, units[i]) for i in order or range(len(units))}
        futures: list[Future[R]] = [submitted[i] for i in range(len(units))]
        try:
            for future in futures:
                yield future.result()
        except BaseException as exc:
            self._stop.set()
            pool.shutdown(wait=isinstance(exc, Exception), cancel_futures=True)
            raise
        pool.shutdown()

    def _task(self, unit: U) -> R:
        if self._stop.is_set():
            raise NotStarted("the run stopped before this unit")
        arms = self._free.get()
        try:
            return self._run_one(unit, arms)
        except BaseException:
            self._stop.set()  # units not started yet never start, as after a serial loop's error
            raise
        finally:
            self._free.put(arms)

    def close(self) -> None:
        """Close the arm sets no lane is using (all of them once `results` is done)."""
        idle = []
        while True:
            try:
                idle.append(self._free.get_nowait())
            except queue.Empty:
                break
        self._close(idle)

    @staticmethod
    def _close(sets: list[ArmSet]) -> None:
        for arms in sets:
            for arm in arms.values():
                arm.close()
