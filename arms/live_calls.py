"""Bounded time for every call a live arm makes: deadlines, a circuit breaker, server waits.

A call to a memory service has two limits. Each attempt has a *total* deadline
(`timeout_s`): the whole reply must have arrived by then, however slowly it trickles
in (a per-read timeout never ends a reply that sends 10 bytes every 0.4 s); the rule
and `CallTimeout` are the model providers' too (`bench.providers.deadline`). The call,
retries and waits included, has `max_retry_time_s`: an attempt only gets what is left
of it, and no wait is started that would end past it — so a call ends within
`max_retry_time_s` plus scheduling noise, never later.

The circuit breaker stops a hanging service from costing a deadline per question:
after `breaker_timeouts` consecutive calls that ran out of time (or at once, when the
connection to the service is lost), it opens with one log line, and every later call
of that arm fails at once with `CircuitOpen` (an `error` result; resume retries them).
A call that succeeds resets the count. `CallLog` keeps each call's latency.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import tenacity

from bench.errors import BenchError
from bench.providers.deadline import CallTimeout

__all__ = ["CallLog", "CallTimeout", "CircuitBreaker", "CircuitOpen", "ServerWait"]

log = logging.getLogger("arms.live")


class CircuitOpen(BenchError):
    """The arm's circuit breaker is open: calls fail at once."""


class CircuitBreaker:
    """Opens after `limit` consecutive timeouts of one arm (thread-safe)."""

    def __init__(self, arm: str, limit: int) -> None:
        if limit < 1:
            raise BenchError(f"arm_options.{arm}.breaker_timeouts={limit}: use 1 or more")
        self.arm, self.limit = arm, limit
        self._lock = threading.Lock()
        self._timeouts = 0
        self._why: str | None = None

    @property
    def is_open(self) -> bool:
        """True once the breaker has opened (it stays open for the arm's lifetime)."""
        return self._why is not None

    def check(self, where: str) -> None:
        """Raise CircuitOpen, naming `where` and why, when the breaker is open."""
        if self._why is not None:
            raise CircuitOpen(
                f"{where}: not sent, arm {self.arm}'s circuit breaker is open ({self._why}); "
                "fix the service, then resume the run"
            )

    def succeeded(self) -> None:
        """A call completed: the count of consecutive timeouts restarts."""
        with self._lock:
            self._timeouts = 0

    def timed_out(self, where: str) -> None:
        """A call ran out of time; opens the breaker at the `limit`-th in a row."""
        with self._lock:
            self._timeouts += 1
            if self._timeouts >= self.limit and self._why is None:
                self._open(f"{self._timeouts} consecutive timeouts, the last at {where}")

    def trip(self, why: str) -> None:
        """Open now (the connection is gone: every later call would fail too)."""
        with self._lock:
            if self._why is None:
                self._open(why)

    def _open(self, why: str) -> None:
        self._why = why
        log.error("arm %s: circuit breaker open (%s); its remaining calls fail at once",
                  self.arm, why)  # fmt: skip


class ServerWait(tenacity.wait.wait_base):
    """Wait before a retry: the server's `Retry-After` when it sent one, else backoff.

    The exception of the failed attempt carries the server's wait as `retry_after_s`
    (parsed by `bench.providers.retry.parse_retry_after`, the providers' one rule);
    without it, exponential backoff with full jitter (0.5 s base, 10 s cap), seeded per
    backend so a run's waits are reproducible. A wait that would pass the call's total
    time is never started (the `stop_before_delay` stop).
    """

    def __init__(self, seed: int = 0) -> None:
        self._random = random.Random(seed)

    def __call__(self, retry_state: tenacity.RetryCallState) -> float:
        """Seconds to wait before the next attempt."""
        outcome = retry_state.outcome
        exc = outcome.exception() if outcome is not None and outcome.failed else None
        server: Any = getattr(exc, "retry_after_s", None)
        if isinstance(server, float | int):
            return float(server)
        ceiling = min(10.0, 0.5 * 2 ** (retry_state.attempt_number - 1))
        return self._random.uniform(0, ceiling)


@dataclass
class CallLog:
    """Service latency per call kind (milliseconds), for ingest stats and contexts."""

    ms: dict[str, list[float]] = field(default_factory=dict)
    """Call kind (`create`, `capture`/`remember`, `search`) -> latencies in ms, in order."""

    def timed(self, kind: str, started: float) -> float:
        """Record a call that started at `started` (perf_counter); its latency in ms."""
        elapsed = (time.perf_counter() - started) * 1000
        self.ms.setdefault(kind, []).append(elapsed)
        return elapsed
