"""Per-role call accounting: calls, HTTP requests, cache hits, tokens, latency, cost.

Tokens and cost count only work done by this process (a cache hit costs nothing and
adds no tokens); `calls` counts every call, including hits and failures. Identical
requests in flight at once are sent once (`bench.providers.openai_chat`): the sender
counts the HTTP request, tokens and cost, each waiter counts as `coalesced` (neither a
request nor a cache hit). A reasoning
model's hidden reasoning is part of its completion tokens (OpenAI reports
`completion_tokens_details.reasoning_tokens` as a share of `completion_tokens`) and is
priced with them; `reasoning_tokens` shows that share.
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass
from typing import Any

from bench.providers.roles import phase_of
from bench.types import Usage


@dataclass(frozen=True)
class Price:
    """Price per 1,000 prompt and completion tokens (either may be unknown)."""

    prompt_per_1k: float | None = None
    """Price per 1,000 prompt tokens; None when unknown."""
    completion_per_1k: float | None = None
    """Price per 1,000 completion tokens; None when unknown."""

    @property
    def known(self) -> bool:
        """True when at least one side is priced."""
        return self.prompt_per_1k is not None or self.completion_per_1k is not None

    def cost(self, usage: Usage) -> float:
        """Cost of one call's usage; unpriced sides count as free.

        cost = prompt/1000 x prompt price + completion/1000 x completion price, where
        completion includes the reasoning tokens (billed as output).
        """
        prompt = (self.prompt_per_1k or 0.0) * usage.prompt_tokens / 1000.0
        return prompt + (self.completion_per_1k or 0.0) * usage.completion_tokens / 1000.0


@dataclass
class Totals:
    """Running totals for one role (or one phase, or everything)."""

    calls: int = 0
    """Calls made (cache hits included)."""
    http_requests: int = 0
    """HTTP requests sent, retries included."""
    cache_hits: int = 0
    """Calls answered from the response cache."""
    coalesced: int = 0
    """Calls that waited for an identical request already in flight on another thread and
    shared its reply (single-flight) instead of sending their own; a shared failure
    counts in `errors`."""
    errors: int = 0
    """Calls that failed."""
    prompt_tokens: int = 0
    """Prompt tokens of work done by this process (cache hits excluded)."""
    completion_tokens: int = 0
    """Completion tokens of work done by this process (cache hits excluded)."""
    reasoning_tokens: int = 0
    """Of `completion_tokens`, the hidden reasoning of a reasoning model."""
    latency_ms: float = 0.0
    """Summed call latency, milliseconds."""
    cost: float | None = None
    """Summed cost of the priced calls; None when none was priced."""

    def add(self, other: Totals) -> None:
        """Fold `other` into these totals."""
        for name in ("calls", "http_requests", "cache_hits", "coalesced", "errors"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.reasoning_tokens += other.reasoning_tokens
        self.latency_ms += other.latency_ms
        if other.cost is not None:
            self.cost = (self.cost or 0.0) + other.cost


class Accountant:
    """Thread-safe totals keyed by role (`answerer`, `extractor`, `embedder`, `judge:<id>`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._roles: dict[str, Totals] = {}
        self._models: dict[str, str] = {}

    def record(
        self,
        role: str,
        model: str,
        *,
        http_requests: int = 0,
        cached: bool = False,
        coalesced: bool = False,
        failed: bool = False,
        usage: Usage | None = None,
        latency_ms: float = 0.0,
        price: Price | None = None,
    ) -> None:
        """Add one call; `usage` and `price` count only for a request this call sent.

        A `cached` or `coalesced` call sent nothing: its tokens and cost are counted once,
        by the call that did.
        """
        fresh = usage if usage is not None and not (cached or coalesced) else Usage()
        call = Totals(
            calls=1,
            http_requests=http_requests,
            cache_hits=int(cached),
            coalesced=int(coalesced),
            errors=int(failed),
            prompt_tokens=fresh.prompt_tokens,
            completion_tokens=fresh.completion_tokens,
            reasoning_tokens=fresh.reasoning_tokens,
            latency_ms=latency_ms,
            cost=price.cost(fresh) if price is not None and price.known else None,
        )
        with self._lock:
            self._roles.setdefault(role, Totals()).add(call)
            self._models[role] = model

    def snapshot(self) -> dict[str, object]:
        """`{"roles": {role: totals+phase+model}, "phases": {...}, "total": {...}}`."""
        with self._lock:
            roles = {r: Totals(**asdict(t)) for r, t in self._roles.items()}
            models = dict(self._models)
        phases: dict[str, Totals] = {}
        total = Totals()
        for role, totals in roles.items():
            phases.setdefault(phase_of(role), Totals()).add(totals)
            total.add(totals)
        return {
            "roles": {
                r: {"phase": phase_of(r), "model": models[r], **_rounded(t)}
                for r, t in sorted(roles.items())
            },
            "phases": {p: _rounded(t) for p, t in sorted(phases.items())},
            "total": _rounded(total),
        }


def _rounded(totals: Totals) -> dict[str, object]:
    out = asdict(totals)
    out["latency_ms"] = round(totals.latency_ms, 3)
    if totals.cost is not None:
        out["cost"] = round(totals.cost, 6)
    return out


def add_accounting(earlier: Any, now: Any) -> Any:
    """Sum two accounting trees field by field (numbers add; other values take `now`)."""
    if isinstance(earlier, dict) and isinstance(now, dict):
        keys = list(dict.fromkeys([*earlier, *now]))
        return {k: add_accounting(earlier.get(k), now.get(k)) for k in keys}
    both_numbers = all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in (earlier, now)
    )
    if both_numbers:
        return earlier + now
    return now if now is not None else earlier


def accounting_delta(now: Any, before: Any) -> Any:
    """What `now` adds to `before`, field by field (numbers subtract; other values: `now`).

    The inverse of `add_accounting`: `add_accounting(before, accounting_delta(now, before))`
    is `now` (up to float rounding). A session adds only its delta since its last save to
    what run.json holds, so concurrent shards' costs sum instead of overwriting each other.
    """
    if isinstance(now, dict):
        old = before if isinstance(before, dict) else {}
        return {k: accounting_delta(v, old.get(k)) for k, v in now.items()}
    both_numbers = all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in (before, now)
    )
    return now - before if both_numbers else now
