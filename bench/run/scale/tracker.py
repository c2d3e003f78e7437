"""The run's overall progress: one bar over every question, and a heartbeat log line.

Units report `tick(questions, errors)` as each record is written (questions already
finished by an earlier session tick at once, so the ETA reflects only what is left).
Ticks arrive from this process, from child processes through a queue, or from Ray
tasks through an actor: the tracker always sees the whole run (the cluster's total).

ETA = (total - done) / rate + the ingestion ETA of the units under way, rate = questions
finished this session / seconds elapsed outside ingestion (seconds in which a unit was
being ingested count only once a question finished in them); questions found finished
do not count towards the rate. So the ETA counts the ingestion left, and does not climb
while an LLM extractor works through a unit with no question finishing.

Ingestion (no question is finished while a unit is being ingested, often for minutes
with an LLM extractor) is reported by the arms per exchange (`ingesting`, wired to
`ArmServices.progress` in this process, from `workers=N` children through their tick
queue, and from Ray tasks through the progress actor, throttled to a few reports a
second per unit): the bar's postfix and the heartbeat name the units under way with
their exchanges and facts, and an ingestion ETA (bench.run.scale.ingesting).

The heartbeat ends with the run's parallelism: `N worker(s)` (the local processes, or 1
in process), or under Ray what the executor sets with `parallelism`, e.g. `2 Ray task(s)
running, cluster 2 CPU(s)` (tasks whose body has started and whose result the driver has
not yet had; bench.run.scale.ray_exec).

While the bar is shown, console log lines are written through tqdm
(`logging_redirect_tqdm`), above the bar instead of through it; the log file is untouched.
"""

from __future__ import annotations

import logging
import threading
import time
from contextlib import ExitStack
from datetime import timedelta
from typing import Any

from bench.run.scale.ingesting import IngestTable

log = logging.getLogger("bench.run")
REFRESH_S = 0.5
"""Least seconds between two redraws of the bar for ingestion progress alone."""


class Tracker:
    """Thread-safe counters behind a tqdm bar and a periodic heartbeat line."""

    def __init__(self, total: int, *, show: bool, heartbeat_s: float, workers: int) -> None:
        from tqdm import tqdm

        self.total = total
        self.done = 0
        self.errors = 0
        self._resumed = 0
        self._parallel = f"{workers} worker(s)"
        self._started = time.monotonic()
        self._lock = threading.Lock()
        self._bar: Any = tqdm(
            total=total, desc="questions", unit="q", disable=not show, dynamic_ncols=True
        )
        self._ingest = IngestTable()
        self._ingest_s = 0.0  # seconds with ingestion under way and no question finished
        self._ingest_mark: float | None = None  # when the current such stretch began
        self._drawn = 0.0
        self._console = ExitStack()
        if show:
            from tqdm.contrib.logging import logging_redirect_tqdm

            self._console.enter_context(logging_redirect_tqdm())
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None
        if heartbeat_s > 0:
            self._beat = threading.Thread(
                target=self._heartbeat_loop, args=(heartbeat_s,), daemon=True
            )
            self._beat.start()

    def tick(self, done: int, errors: int, resumed: int = 0) -> None:
        """Count questions finished now and questions found finished (`resumed`).

        `resumed` questions stay out of the rate. A retried unit may report a question
        twice, so the count is capped at the total.
        """
        with self._lock:
            before = self.done
            self.done = min(self.total, self.done + done + resumed)
            self._resumed += resumed
            if done and self._ingest_mark is not None:  # answering overlaps ingestion
                self._ingest_mark = time.monotonic()
            self.errors += errors
            self._bar.update(self.done - before)

    def ingesting(self, arm: str, unit: str, done: int, total: int, facts: int) -> None:
        """An arm's ingestion of a unit: `done` of `total` exchanges, `facts` stored so far.

        The signature of `bench.arm.ArmServices.progress`; safe from any thread.
        """
        with self._lock:
            now = time.monotonic()
            if self._ingest_mark is not None:
                self._ingest_s += now - self._ingest_mark
            self._ingest.update(arm, unit, done, total, facts)
            self._ingest_mark = now if self._ingest.busy else None
            if now - self._drawn >= REFRESH_S or done >= total:
                self._drawn = now
                self._bar.set_postfix_str(self._ingest.postfix())

    def relay(self, method: str, arguments: tuple[Any, ...]) -> None:
        """Apply one `(method, arguments)` message from a worker: `ingesting` or `tick`.

        The one form workers' reports take on their way here (a `workers=N` child's
        queue, the Ray progress actor).
        """
        if method == "ingesting":
            self.ingesting(*arguments)
        else:
            self.tick(*arguments)

    def parallelism(self, text: str) -> None:
        """Replace the heartbeat's `N worker(s)` with `text` (what runs the units now)."""
        with self._lock:
            self._parallel = text

    def heartbeat(self) -> str:
        """One line: done/total, errors, rate, ETA and parallelism; then ingestion under way."""
        with self._lock:
            now = time.monotonic()
            fresh = self.done - self._resumed
            per_min = fresh / max(now - self._started, 1e-9) * 60
            share = 100.0 * self.done / self.total if self.total else 100.0
            ingesting = self._ingest.line()
            return (
                f"heartbeat: {self.done}/{self.total} questions ({share:.0f}%), "
                f"{self.errors} arm results in error, {per_min:.1f} q/min, "
                f"ETA {self._eta(now, fresh)}, {self._parallel}"
                + (f"; {ingesting}" if ingesting else "")
            )

    def _eta(self, now: float, fresh: int) -> str:
        """The module's ETA: questions left at the answering rate, plus ingestion left."""
        mark = self._ingest_mark
        answering = max(now - self._started - self._ingest_s - (now - mark if mark else 0.0), 1e-9)
        rate = fresh / answering
        left = max(self.total - self.done, 0)
        ingest = self._ingest.eta_s()
        if rate > 0 or (ingest is not None and left == 0):
            return str(timedelta(seconds=round((left / rate if rate > 0 else 0.0) + (ingest or 0))))
        if ingest is not None:  # no question finished yet: at least the ingestion left
            return f">= {timedelta(seconds=round(ingest))}"
        return "unknown"

    def _heartbeat_loop(self, every_s: float) -> None:
        while not self._stop.wait(every_s):
            log.info(self.heartbeat())

    def close(self) -> None:
        """Stop the heartbeat, log the final line and close the bar."""
        self._stop.set()
        if self._beat is not None:
            self._beat.join(timeout=5)
            log.info(self.heartbeat())
        self._bar.close()
        self._console.close()
