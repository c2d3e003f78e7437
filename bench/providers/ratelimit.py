"""A thread-safe sliding-window limiter for requests and tokens per window (per minute).

Each HTTP attempt reserves one request and an estimate of its tokens before it is
sent. While it is in flight the reservation counts in every window; when it ends,
`settle` stamps it with the end time and the tokens the server reported. Counting a
request until `end + window` (not `start + window`) is what guarantees the server
never sees more than `requests_per_window` arrivals in any window, whatever the
network delay: an arrival happens between start and end. Only a limiter with a cap keeps
reservations, and only those still in flight or ended within the window: an uncapped one
(the default) holds none, however many calls a run makes.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol


@dataclass
class Reservation:
    """One attempt's slot: its tokens, and when it ended (inf while in flight)."""

    tokens: int
    """Tokens reserved for the attempt."""
    ended: float = math.inf
    """Limiter clock time (monotonic seconds) when the attempt ended; inf while in flight."""


class Limiter(Protocol):
    """What a deployment asks of its limiter (in process, or a Ray actor's proxy)."""

    def acquire(self, estimated_tokens: int) -> Reservation:
        """Block until one more request fits; reserve it."""
        ...

    def settle(self, reservation: Reservation, actual_tokens: int | None) -> None:
        """The attempt has ended, having used `actual_tokens` (when known)."""
        ...

    def pause(self, seconds: float) -> None:
        """Hold every new request for `seconds`."""
        ...


LimiterFactory = Callable[[str, str, "int | None", "int | None", float], Limiter]
"""`(base_url, model, requests_per_window, tokens_per_window, window_s) -> Limiter`."""


class SlidingWindowLimiter:
    """Caps requests and tokens in any `window_s`-second window; `None` means no cap."""

    def __init__(
        self,
        requests_per_window: int | None,
        tokens_per_window: int | None,
        *,
        window_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.requests_per_window = requests_per_window
        self.tokens_per_window = tokens_per_window
        self.window_s = window_s
        self._clock = clock
        self._entries: deque[Reservation] = deque()
        self._paused_until = 0.0
        self._cond = threading.Condition()

    @property
    def enabled(self) -> bool:
        """True when either cap is set."""
        return bool(self.requests_per_window or self.tokens_per_window)

    @property
    def held(self) -> int:
        """Reservations kept: in flight or ended less than a window ago (0 when uncapped)."""
        with self._cond:
            return len(self._entries)

    def acquire(self, estimated_tokens: int) -> Reservation:
        """Block until one more request of `estimated_tokens` fits, then reserve it."""
        tokens = max(0, estimated_tokens)
        if self.tokens_per_window:
            tokens = min(tokens, self.tokens_per_window)
        reservation = Reservation(tokens)
        with self._cond:
            while True:
                wait = self._wait_needed(tokens)
                if wait <= 0:
                    if self.enabled:  # uncapped, nothing reads them: none are kept
                        self._entries.append(reservation)
                    return reservation
                self._cond.wait(timeout=None if math.isinf(wait) else wait)

    def settle(self, reservation: Reservation, actual_tokens: int | None) -> None:
        """Mark the attempt finished now, with the tokens it really used (if known)."""
        with self._cond:
            reservation.ended = self._clock()
            if actual_tokens is not None:
                reservation.tokens = max(0, actual_tokens)
            self._cond.notify_all()

    def delay_for(self, estimated_tokens: int) -> float:
        """Seconds until a request of `estimated_tokens` would fit (inf: until one ends)."""
        tokens = max(0, estimated_tokens)
        if self.tokens_per_window:
            tokens = min(tokens, self.tokens_per_window)
        with self._cond:
            return max(0.0, self._wait_needed(tokens))

    def pause(self, seconds: float) -> None:
        """Hold every new request for `seconds` (a server asked us to back off)."""
        with self._cond:
            self._paused_until = max(self._paused_until, self._clock() + seconds)

    def _wait_needed(self, tokens: int) -> float:
        """Seconds until a new request fits (inf: wait for an in-flight one); 0 if now."""
        now = self._clock()
        if now < self._paused_until:
            return self._paused_until - now
        if not self.enabled:
            return 0.0
        horizon = now - self.window_s
        while self._entries and self._entries[0].ended <= horizon:
            self._entries.popleft()
        live = [e for e in self._entries if e.ended > horizon]
        return max(self._request_wait(live, now), self._token_wait(live, tokens, now))

    def _request_wait(self, live: list[Reservation], now: float) -> float:
        cap = self.requests_per_window
        if not cap or len(live) < cap:
            return 0.0
        ends = sorted(e.ended for e in live)
        return ends[len(live) - cap] + self.window_s - now

    def _token_wait(self, live: list[Reservation], tokens: int, now: float) -> float:
        cap = self.tokens_per_window
        used = sum(e.tokens for e in live)
        if not cap or used + tokens <= cap or not live:
            return 0.0
        running = used
        for entry in sorted(live, key=lambda e: e.ended):
            running -= entry.tokens
            if running + tokens <= cap:
                return entry.ended + self.window_s - now
        return math.inf
