"""Bounded time for every call a live arm makes: deadlines, a circuit breaker, server waits.

A call to a memory service has two limits. Each attempt has a *total* deadline
(`timeout_s`): the whole reply must have arrived by then, however slowly it trickles
in (a per-read timeout never ends a reply that sends 10 bytes every 0.4 s); the rule
and `CallTimeout` are the model providers' too (`bench.providers.deadline`). The call,
retries and waits included, has `max_retry_time_s`: an attempt only gets what is left
of it, and no wait is started that would end past it — so a call ends within
`max_retry_time_s` plus scheduling noise, never later.

The circuit breaker (`bench.arm.breaker`, shared with plug-in arms) stops a hanging
service from costing a deadline per question: after `breaker_timeouts` consecutive calls
that ran out of time (or at once, when the connection to the service is lost), it opens
with one log line, and every later call of that arm fails at once with `CircuitOpen`
(an `error` result; resume retries them). A call that succeeds resets the count.
`CallLog` counts calls and sums their latency per kind.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Any

import tenacity

from bench.arm.breaker import CircuitBreaker, CircuitOpen
from bench.providers.deadline import CallTimeout

__all__ = ["CallLog", "CallTimeout", "CircuitBreaker", "CircuitOpen", "ServerWait"]


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
    """Service calls per kind since the kind's `restart`: count and summed latency (ms).

    Two numbers a kind, not a latency per call: a 10M-token conversation's ~17,000
    writes (and every question's search, over a whole run) used to stay in a list.
    """

    calls: dict[str, int] = field(default_factory=dict)
    """Call kind (`create`, `capture`/`remember`, `search`) -> calls since its restart."""
    ms: dict[str, float] = field(default_factory=dict)
    """Call kind -> latencies summed in call order since its restart (as `sum` adds them)."""

    def timed(self, kind: str, started: float) -> float:
        """Record a call that started at `started` (perf_counter); its latency in ms."""
        elapsed = (time.perf_counter() - started) * 1000
        self.calls[kind] = self.calls.get(kind, 0) + 1
        self.ms[kind] = self.ms.get(kind, 0) + elapsed
        return elapsed

    def restart(self, kind: str) -> None:
        """Count `kind` from zero (one conversation's writes)."""
        self.calls[kind], self.ms[kind] = 0, 0
