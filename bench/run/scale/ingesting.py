"""Ingestion progress: the units being ingested, their exchanges and facts, and an ETA.

Arms that ingest exchange by exchange report `(arm, unit, done, total, facts)` through
`ArmServices.progress` (bench.arm); with units side by side (bench.run.lanes) several
report at once. The first report of an (arm, unit) pair is its starting point (a store
resumed mid-conversation starts past 0) and stays out of the rate; a pair leaves the
table once `done == total`.

ETA = exchanges left in the pairs under way / rate, rate = exchanges ingested this
session / seconds since the first report. Not thread-safe on its own: the `Tracker`
calls it under its lock.

A sender that pays per report (a Ray task calling the progress actor) passes them through
a `ReportThrottle`: a pair's first and last reports always go, the rest at most one per
`EVERY_S` seconds, so 10,000 exchanges make a few calls a second, not 10,000. Reports are
cumulative (`done`, `facts` so far), so the ones left out lose nothing but resolution.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import timedelta

SHOWN = 3
"""Pairs named in the heartbeat line; the rest are counted ("and 2 more")."""
EVERY_S = 0.5
"""Least seconds between two of a pair's reports let through by a `ReportThrottle`."""


@dataclass
class _Pair:
    """One arm ingesting one unit."""

    done: int
    total: int
    facts: int


class IngestTable:
    """The (arm, unit) pairs under way, and the exchange rate of this session."""

    def __init__(self) -> None:
        self._pairs: dict[tuple[str, str], _Pair] = {}
        self._fresh = 0
        self._since: float | None = None

    def update(self, arm: str, unit: str, done: int, total: int, facts: int) -> None:
        """Record a pair's progress; a finished pair (`done >= total`) leaves the table."""
        key = (arm, unit)
        now = time.monotonic()
        if self._since is None:
            self._since = now
        pair = self._pairs.get(key)
        if pair is not None:
            self._fresh += max(0, done - pair.done)
        if done >= total:
            self._pairs.pop(key, None)
            return
        self._pairs[key] = _Pair(done, total, facts)

    @property
    def busy(self) -> bool:
        """True while a pair is under way."""
        return bool(self._pairs)

    def eta_s(self) -> float | None:
        """Seconds left for the pairs under way at this session's rate; None before any."""
        elapsed = time.monotonic() - self._since if self._since is not None else 0.0
        if self._fresh == 0 or elapsed <= 0:
            return None
        left = sum(p.total - p.done for p in self._pairs.values())
        return left * elapsed / self._fresh

    def eta(self) -> str:
        """`eta_s` as `H:MM:SS` ("unknown" before any exchange was ingested)."""
        seconds = self.eta_s()
        return "unknown" if seconds is None else str(timedelta(seconds=round(seconds)))

    def postfix(self) -> str:
        """A short note for the bar: the pairs under way, exchanges done of total."""
        return ", ".join(
            f"{arm} {unit} {p.done}/{p.total}" for (arm, unit), p in self._pairs.items()
        )

    def line(self) -> str:
        """The heartbeat's part: `ingesting N units: arm unit d/t exchanges, f facts; ... ETA`.

        Empty when nothing is being ingested.
        """
        if not self._pairs:
            return ""
        units = len({unit for _, unit in self._pairs})
        items = sorted(self._pairs.items())
        named = [
            f"{arm} {unit} {p.done}/{p.total} exchanges, {p.facts} facts"
            for (arm, unit), p in items[:SHOWN]
        ]
        more = f"; and {len(items) - SHOWN} more" if len(items) > SHOWN else ""
        return f"ingesting {units} unit(s): {'; '.join(named)}{more}; ingest ETA {self.eta()}"


class ReportThrottle:
    """Which of a sender's ingestion reports to send: first, last, and one per `every_s`."""

    def __init__(self, every_s: float = EVERY_S) -> None:
        self._every_s = every_s
        self._sent: dict[tuple[str, str], float] = {}

    def due(self, arm: str, unit: str, done: int, total: int, now: float) -> bool:
        """True when the report must go: the pair's first, its last, or `every_s` after the last.

        `now` is the sender's monotonic clock. The first report is the pair's starting point
        (`IngestTable`) and the last (`done >= total`) takes it off the table, so neither is
        ever dropped; a pair's entry is forgotten with its last report.
        """
        key = (arm, unit)
        last = self._sent.get(key)
        if done >= total:
            self._sent.pop(key, None)
            return True
        if last is not None and now - last < self._every_s:
            return False
        self._sent[key] = now
        return True
