"""The circuit breaker of an arm whose calls can hang: live services and plug-in arms.

It stops a hanging service or plug-in from costing a deadline per question: after
`limit` consecutive calls that ran out of time (or at once, when the connection to the
service is lost or a plug-in tried to end the process: `trip`), it opens with one log
line, and every later call of that arm fails at once with `CircuitOpen` (an `error`
result; resume retries them). A call that succeeds resets the count. The deadline of
each call is `bench.providers.deadline` (HTTP) or `bench.arm.guard` (plug-ins).
"""

from __future__ import annotations

import logging
import threading

from bench.errors import BenchError

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
        log.error(
            "arm %s: circuit breaker open (%s); its remaining calls fail at once", self.arm, why
        )
