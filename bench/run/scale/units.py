"""Units of work: the pieces a run can be split into without changing any record.

A unit is the smallest thing that owns its state: a LoCoMo conversation (its questions
share one ingestion store and must run in order), a LongMemEval question (the loader
makes each one its own conversation with its own haystack), a suite namespace. Units
share nothing but read-only inputs, and each question file is written by exactly one
unit, so units can run in any order, in any process, on any machine, and the run
directory merges by construction.

Shards pick units by position in the dataset's own (deterministic) order: shard `i/n`
takes positions p with `p % n == i`. Round-robin keeps the shards balanced when unit
sizes drift along the file (LoCoMo's conversations grow), and it depends only on the
dataset and `limit.*`, never on the machine.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from bench.errors import ConfigError
from bench.types import Conversation

_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


@dataclass(frozen=True)
class Unit:
    """One independent piece of a run: a conversation and its pending question count."""

    position: int
    """Index in the dataset's order (after `limit.*`); shards and ties key on it."""
    conversation: Conversation
    """The conversation: its sessions and the questions still to run."""

    @property
    def unit_id(self) -> str:
        """The conversation id (LongMemEval: the question id)."""
        return self.conversation.conversation_id

    @property
    def turns(self) -> int:
        """Turns in the conversation (how long ingesting it takes, roughly)."""
        return sum(len(s.turns) for s in self.conversation.sessions)

    def longest_first(self) -> tuple[int, int]:
        """Sort key: the longest units first, ties by position.

        The pool's tail is then the short units, so every worker or lane stays busy
        until near the end.
        """
        return (-self.turns, self.position)

    @property
    def questions(self) -> int:
        """Questions this unit answers (progress totals)."""
        return len(self.conversation.questions)


@dataclass(frozen=True)
class Shard:
    """`shard=i/n`: this process runs every n-th unit starting at i (0-based)."""

    index: int
    """`i`: this shard's 0-based index (0 <= i < count)."""
    count: int
    """`n`: how many shards the run is split into."""

    def holds(self, position: int) -> bool:
        """True when the unit at `position` belongs to this shard."""
        return position % self.count == self.index


def parse_shard(text: str | None) -> Shard | None:
    """`"1/4"` -> Shard(1, 4); None -> None; anything else is a one-line ConfigError."""
    if text is None or str(text).strip() in ("", "null", "none"):
        return None
    match = _SHARD.match(str(text))
    if not match:
        raise ConfigError(f"shard={text}: expected i/n with 0 <= i < n, e.g. shard=0/2")
    index, count = int(match.group(1)), int(match.group(2))
    if count < 1 or index >= count:
        raise ConfigError(f"shard={text}: need 0 <= i < n (shards are numbered from 0)")
    return Shard(index, count)


def units_of(conversations: tuple[Conversation, ...], shard: Shard | None = None) -> list[Unit]:
    """The dataset's units in order, restricted to `shard` when given."""
    units = [Unit(i, c) for i, c in enumerate(conversations)]
    return [u for u in units if shard is None or shard.holds(u.position)]


def resolve_workers(requested: int, offline: bool, units: int, phase: str = "all") -> int:
    """How many processes to use: `workers=0` means auto (cores when offline, else 1).

    Auto stays at 1 for live providers because each process has its own rate limiter:
    N processes would send N times the configured requests per minute; and for
    `phase=predict|evaluate`, which run in one process.
    """
    if requested < 0:
        raise ConfigError(f"workers={requested}: expected 0 (auto) or a positive count")
    if requested == 0:
        requested = (os.cpu_count() or 1) if offline and phase == "all" else 1
    return max(1, min(requested, units))
