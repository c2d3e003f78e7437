"""What a dry run estimates: per role requests, tokens, cost and time, and their total.

Filled by the recorders (`bench.run.dry_recorders`) while `bench.run.dry_run` walks the
run; printed, checked against `budget.max_usd` and written to `<out>/dry_run.json`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.config import EmbedderConfig, EndpointConfig
from bench.errors import ConfigError
from bench.files import write_json_atomic
from bench.paths import contained
from bench.providers.roles import phase_of

DRY_RUN_FILE = "dry_run.json"


@dataclass
class RoleEstimate:
    """What one role would send: requests, tokens, cache coverage, cost and time."""

    role: str
    """`answerer`, `extractor`, `embedder` or `judge:<id>`."""
    model: str
    """The model the role's endpoint names."""
    requests: int = 0
    """Requests the run would send (those the cache already answers excluded)."""
    cached: int = 0
    """Requests (or texts, for the embedder) the response cache already answers."""
    prompt_tokens: int = 0
    """Prompt tokens of the uncached requests, counted with the run's tokenizer."""
    completion_tokens_max: int = 0
    """Upper bound on completion tokens: the completion cap of each uncached request."""
    price_prompt_per_1k: float | None = None
    """The endpoint's price per 1,000 prompt tokens; None when not configured."""
    price_completion_per_1k: float | None = None
    """The endpoint's price per 1,000 completion tokens; None when not configured."""
    requests_per_minute: int | None = None
    """The endpoint's request rate limit; None when unlimited."""
    tokens_per_minute: int | None = None
    """The endpoint's token rate limit; None when unlimited."""
    calls: int = 0
    """Uncached requests counted without merging identical ones (`requests_high`)."""
    prompt_tokens_high: int = 0
    """Prompt tokens of all `calls`."""
    completion_tokens_high: int = 0
    """Completion cap of all `calls`."""
    judged_low: int | None = None
    """A judge's requests were every arm's answer to a question the same: per question,
    the most any one arm needed (`DryRunEstimate.judged`); None for other roles."""

    @property
    def requests_low(self) -> int:
        """Fewest requests: identical answers judged once (a judge), else `requests`."""
        return self.requests if self.judged_low is None else min(self.judged_low, self.requests)

    @property
    def requests_high(self) -> int:
        """Most requests: every answer judged, every identical request sent again."""
        return max(self.calls, self.requests)

    @property
    def cost_high(self) -> float | None:
        """`cost` at `requests_high` (what `budget.max_usd` is checked against)."""
        if self.price_prompt_per_1k is None and self.price_completion_per_1k is None:
            return None
        prompt = max(self.prompt_tokens_high, self.prompt_tokens)
        completion = max(self.completion_tokens_high, self.completion_tokens_max)
        return prompt / 1000 * (self.price_prompt_per_1k or 0.0) + completion / 1000 * (
            self.price_completion_per_1k or 0.0
        )

    @property
    def phase(self) -> str:
        """The accounting phase of the role (`answerer` → answering, ...)."""
        return phase_of(self.role)

    @property
    def cost(self) -> float | None:
        """Price of the uncached requests' tokens; None when the endpoint has no price."""
        if self.price_prompt_per_1k is None and self.price_completion_per_1k is None:
            return None
        return self.prompt_tokens / 1000 * (
            self.price_prompt_per_1k or 0.0
        ) + self.completion_tokens_max / 1000 * (self.price_completion_per_1k or 0.0)

    @property
    def min_wall_s(self) -> float | None:
        """Shortest time the rate limits allow for the uncached requests; None if unlimited."""
        bounds = []
        if self.requests_per_minute:
            bounds.append(self.requests / self.requests_per_minute * 60)
        if self.tokens_per_minute:
            tokens = self.prompt_tokens + self.completion_tokens_max
            bounds.append(tokens / self.tokens_per_minute * 60)
        return max(bounds) if bounds else None


@dataclass
class DryRunEstimate:
    """Every role's estimate, in the order the roles were first used."""

    roles: dict[str, RoleEstimate] = field(default_factory=dict)
    """Role name -> its estimate, in first-use order."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    """Guards the counters: answers and judgements are estimated from pool threads."""
    notes: list[str] = field(default_factory=list)
    """What the estimate stood in for (a live arm, never contacted), one line each."""
    per_budget: dict[int, dict[str, int]] = field(default_factory=dict)
    """Context budget -> role -> the extra requests its answers and verdicts send."""

    def add_budget(self, budget: int, before: dict[str, int]) -> None:
        """Count each role's requests made since `before` (role -> requests) under `budget`."""
        counts = self.per_budget.setdefault(budget, {})
        for name, role in self.roles.items():
            if added := role.requests - before.get(name, 0):
                counts[name] = counts.get(name, 0) + added

    probes: tuple[int, int] = (0, 0)
    """Start-up GET requests (key checks, context window): (fewest, most); no tokens."""

    def judge_calls(self) -> dict[str, int]:
        """Each judge role's `calls` so far (`judged` takes the per-arm differences)."""
        return {n: r.calls for n, r in self.roles.items() if n.startswith("judge")}

    def judged(self, per_arm: list[dict[str, int]]) -> None:
        """Add one question's judge calls, one dict per arm: the low end takes the largest.

        Identical answers are judged once, so when every arm answers alike the question
        costs what one arm's answer does; when all differ, the sum (`calls`) is paid.
        """
        for name in {n for calls in per_arm for n in calls}:
            role = self.roles[name]
            most = max(calls.get(name, 0) for calls in per_arm)
            role.judged_low = (role.judged_low or 0) + most

    def role(self, name: str, model: str, endpoint: EndpointConfig | EmbedderConfig) -> Any:
        """The (created on first use) estimate of one role."""
        if name not in self.roles:
            self.roles[name] = RoleEstimate(
                name,
                model,
                price_prompt_per_1k=getattr(endpoint, "price_prompt_per_1k", None),
                price_completion_per_1k=getattr(endpoint, "price_completion_per_1k", None),
                requests_per_minute=endpoint.requests_per_minute,
                tokens_per_minute=endpoint.tokens_per_minute,
            )
        return self.roles[name]

    def lines(self) -> list[str]:
        """The printed table: one line per role, then the total."""
        out = ["dry run: no provider call made, no record written"]
        out += [f"  note: {note}" for note in self.notes]
        for r in self.roles.values():
            cost = "price unknown" if r.cost is None else f"${r.cost:.4f}"
            wall = "no rate limit" if r.min_wall_s is None else f">= {r.min_wall_s:.0f} s"
            span = (
                ""
                if r.requests_low == r.requests_high
                else (
                    f" [{r.requests_low}-{r.requests_high} as answers repeat or differ"
                    + ("" if r.cost_high is None else f", up to ${r.cost_high:.4f}")
                    + "]"
                )
            )
            out.append(
                f"  {r.phase:<10} {r.role:<14} {r.model}: {r.requests} requests "
                f"({r.cached} already cached, not counted), {r.prompt_tokens} prompt tokens, "
                f"<= {r.completion_tokens_max} completion tokens, {cost}, {wall}{span}"
            )
        if any(self.probes):
            low, high = self.probes
            out.append(f"  start-up   probes: {low}-{high} GET requests (no tokens, no cost)")
        if not self.roles:
            out.append("  every role is offline: no requests, no cost")
            return out
        total = self.total()
        cost = (
            "no price configured"
            if total["priced_cost"] is None
            else (f"${total['priced_cost']:.4f} (up to ${total['cost_high']:.4f})")
        )
        if total["unpriced_roles"]:
            cost += f" + unknown ({', '.join(total['unpriced_roles'])}: no price configured)"
        out.append(
            f"  total: {total['requests']} requests ({total['requests_low']}-"
            f"{total['requests_high']}), cost {cost}"
        )
        for budget, counts in sorted(self.per_budget.items()):
            extra = ", ".join(f"{n} {r}" for r, n in counts.items()) or "none (offline roles)"
            out.append(f"  of which context budget {budget}: {extra} requests")
        return out

    def total(self) -> dict[str, Any]:
        """Requests (chat ones apart), tokens and cost over every role.

        `cost` is None when a role with requests has no price (named in
        `unpriced_roles`); `priced_cost` sums the priced roles alone.
        """
        roles = list(self.roles.values())
        unpriced = [r.role for r in roles if r.cost is None and r.requests]
        costs = [r.cost for r in roles if r.cost is not None]
        priced = sum(costs) if costs else None
        return {
            "requests": sum(r.requests for r in roles),
            "requests_low": sum(r.requests_low for r in roles),
            "requests_high": sum(r.requests_high for r in roles),
            "probes": list(self.probes),
            "cost_high": sum(r.cost_high or 0.0 for r in roles) if costs else None,
            "chat_requests": sum(r.requests for r in roles if r.role != "embedder"),
            "cached": sum(r.cached for r in roles),
            "prompt_tokens": sum(r.prompt_tokens for r in roles),
            "completion_tokens_max": sum(r.completion_tokens_max for r in roles),
            "cost": None if unpriced else (priced or 0.0),
            "priced_cost": priced,
            "unpriced_roles": unpriced,
        }

    def check_budget(self, max_usd: float | None) -> None:
        """Refuse (ConfigError, one line) an estimate over `max_usd` or with unknown prices."""
        if max_usd is None:
            return
        total = self.total()
        cost = total["cost_high"] or 0.0  # every answer judged: the most the run can send
        if total["unpriced_roles"]:
            raise ConfigError(
                f"budget.max_usd={max_usd:g}: cannot check it, "
                f"{', '.join(total['unpriced_roles'])} have no price: set their "
                "price_prompt_per_1k/price_completion_per_1k, or budget.max_usd=null"
            )
        if cost > max_usd:
            raise ConfigError(
                f"budget.max_usd={max_usd:g}: the estimate is ${cost:.4f} for "
                f"{total['requests']} requests (dry_run=true shows it per role): raise the cap "
                "or run less (limit.conversations=N, fewer arms)"
            )

    def report(self, out: Path) -> list[str]:
        """Write `<out>/dry_run.json`; the printed lines, naming that file last."""
        path = contained(out / DRY_RUN_FILE, out)
        out.mkdir(parents=True, exist_ok=True)
        write_json_atomic(path, self.to_json())
        return [*self.lines(), f"  estimate written to {path}"]

    def to_json(self) -> dict[str, Any]:
        """What `<out>/dry_run.json` holds: every role's figures and the total."""
        roles = {
            r.role: {
                "phase": r.phase,
                "model": r.model,
                "requests": r.requests,
                "cached": r.cached,
                "prompt_tokens": r.prompt_tokens,
                "completion_tokens_max": r.completion_tokens_max,
                "cost": r.cost,
                "min_wall_s": r.min_wall_s,
                "requests_low": r.requests_low,
                "requests_high": r.requests_high,
                "cost_high": r.cost_high,
            }
            for r in self.roles.values()
        }
        out = {"dry_run": True, "roles": roles, "total": self.total(), "notes": self.notes}
        if self.per_budget:
            out["budgets"] = {str(b): dict(c) for b, c in sorted(self.per_budget.items())}
        return out
