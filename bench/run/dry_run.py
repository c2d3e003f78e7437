"""`dry_run=true`: what a run would send, counted before any provider call.

The run's own steps build the exact requests: the dataset is loaded and limited, each
arm ingests and retrieves offline, and the answer step renders the real answer and
judge prompts. Every chat role (answerer, extractor, judges) is replaced by a recorder
that counts the request and replies with a placeholder; a remote embedder is replaced by
the offline WordLlama embedder (its shipped dimension, zero-padded or cut to the
configured one, so a 1536-dimension model needs no weights of that size; retrieval then
runs offline, so contexts are close to, not identical with, the live run's). Nothing
reaches a server, and no API key is read: the recorders stand in for every remote
client.
An LLM extractor's replies are placeholders, so the embeddings of the memories it would
extract are not counted: the embedder's figures are a floor. Retries (timeouts, 429s)
are not foreseeable and not counted.

Per role: requests not already in the response cache, prompt tokens counted with the
run's tokenizer on every message's content, completion tokens bounded by `max_tokens`
(a reasoning endpoint's `max_completion_tokens`, hidden reasoning included; an `auto`
one's larger of the two; prompt-only for embeddings), cost = tokens / 1000 x the
endpoint's price, and the minimum wall time the rate limits allow,
`max(requests / requests_per_minute, tokens / tokens_per_minute)` minutes.
Judge prompts carry the placeholder answer, so they slightly under-count the answer's
tokens. The arms' stores go to a temporary folder; no record or run.json is written.
The estimate is printed and written to `<out>/dry_run.json` (`to_json`: per role, and a
`total` whose `cost` is null, with the unpriced roles named, when any role with requests
has no price: a total that silently left them out would read as complete).
"""

from __future__ import annotations

import math
import tempfile
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from bench.config import EmbedderConfig, EndpointConfig, RunConfig
from bench.errors import ConfigError
from bench.files import write_json_atomic
from bench.paths import contained
from bench.providers.base import CallOptions, ChatProvider, Embedder, Message
from bench.providers.cache import ResponseCache
from bench.providers.roles import phase_of
from bench.tokens import TokenCounter
from bench.types import ChatResult, Usage

DRY_RUN_FILE = "dry_run.json"
PLACEHOLDER_ANSWER = "unknown"
PLACEHOLDER_VERDICT = '{"reasoning": "dry run", "correct": false, "score": 1}'
"""Parsed by armbench's judges; its `score` lets BEAM's judge ask every rubric item (and,
matching no event, every comparison: an upper bound of its calls)."""


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
        for r in self.roles.values():
            cost = "price unknown" if r.cost is None else f"${r.cost:.4f}"
            wall = "no rate limit" if r.min_wall_s is None else f">= {r.min_wall_s:.0f} s"
            out.append(
                f"  {r.phase:<10} {r.role:<14} {r.model}: {r.requests} requests "
                f"({r.cached} already cached, not counted), {r.prompt_tokens} prompt tokens, "
                f"<= {r.completion_tokens_max} completion tokens, {cost}, {wall}"
            )
        if not self.roles:
            out.append("  every role is offline: no requests, no cost")
            return out
        total = self.total()
        cost = "no price configured" if total["priced_cost"] is None else (
            f"${total['priced_cost']:.4f}"
        )  # fmt: skip
        if total["unpriced_roles"]:
            cost += f" + unknown ({', '.join(total['unpriced_roles'])}: no price configured)"
        out.append(f"  total: {total['requests']} requests, cost {cost}")
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
        cost = total["priced_cost"] or 0.0
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
            r.role: {"phase": r.phase, "model": r.model, "requests": r.requests,
                     "cached": r.cached, "prompt_tokens": r.prompt_tokens,
                     "completion_tokens_max": r.completion_tokens_max, "cost": r.cost,
                     "min_wall_s": r.min_wall_s}
            for r in self.roles.values()
        }  # fmt: skip
        return {"dry_run": True, "roles": roles, "total": self.total()}


class _DryChat:
    """A ChatProvider that counts what the real one would send, and never sends it."""

    def __init__(
        self, real: Any, role: str, cfg: EndpointConfig, est: DryRunEstimate, ctx: _Context
    ) -> None:
        self.model: str = cfg.model
        self._real, self._cfg, self._ctx = real, cfg, ctx
        self._est = est.role(role, cfg.model, cfg)
        self._lock = est.lock
        self._seen: set[str] = set()

    def complete(
        self,
        messages: list[Message],
        *,
        tools: list[dict[str, Any]] | None = None,
        prompt_version: str = "",
        options: CallOptions | None = None,
    ) -> ChatResult:
        """Count the request (unless the cache holds it); reply with a placeholder."""
        remote = self._ctx.remote
        key = self._real.request_key(messages, tools, prompt_version, options) if remote else None
        with self._lock:
            if key is not None and key in self._seen:  # the real client shares repeats
                return self._reply()
            if key is not None:
                self._seen.add(key)
            if key is not None and self._ctx.cached(key):
                self._est.cached += 1
            else:
                self._est.requests += 1
                self._est.prompt_tokens += sum(
                    self._ctx.tokens.count(str(m.get("content") or "")) for m in messages
                )
                self._est.completion_tokens_max += (
                    self._real.max_completion(options) if remote else self._cfg.max_tokens
                )
        return self._reply()

    def _reply(self) -> ChatResult:
        text = PLACEHOLDER_VERDICT if self._est.role.startswith("judge") else PLACEHOLDER_ANSWER
        return ChatResult(text=text, model=self.model, usage=Usage(), finish_reason="stop")


class _DryEmbedder:
    """An Embedder counting the remote requests while the offline one gives the vectors."""

    def __init__(self, real: Any, cfg: EmbedderConfig, est: DryRunEstimate, ctx: _Context) -> None:
        from bench.providers.offline_embed import WordLlamaEmbedder

        self.model: str = cfg.model
        self.dim: int = cfg.dim
        self._real, self._batch, self._ctx = real, max(1, cfg.batch_size), ctx
        self._offline = WordLlamaEmbedder()  # the shipped dimension; `embed` fits it to `dim`
        self._est = est.role("embedder", cfg.model, cfg)
        self._lock = est.lock
        self._seen: set[str] = set()

    def embed(self, texts: list[str]) -> np.ndarray:
        """Offline vectors; counts the batches of texts not cached (nor embedded before)."""
        unique = [t for t in dict.fromkeys(texts) if t not in self._seen]
        missing = [t for t in unique if not self._ctx.cached(self._real._key(t))]
        with self._lock:
            self._seen.update(unique)
            self._est.cached += len(unique) - len(missing)
            self._est.requests += math.ceil(len(missing) / self._batch)
            self._est.prompt_tokens += sum(self._ctx.tokens.count_many(missing))
        return fit_dim(self._offline.embed(texts), self.dim)


def fit_dim(vectors: np.ndarray, dim: int) -> np.ndarray:
    """Rows zero-padded (cosines unchanged) or cut and renormalised to `dim` columns."""
    have = vectors.shape[1]
    if have < dim:
        return np.pad(vectors, ((0, 0), (0, dim - have)))
    cut = vectors[:, :dim]
    norms = np.linalg.norm(cut, axis=1, keepdims=True)
    fitted: np.ndarray = np.divide(cut, norms, out=np.zeros_like(cut), where=norms > 0)
    return fitted


@dataclass
class _Context:
    """What the recorders share: the tokenizer and a read-only view of the cache."""

    tokens: TokenCounter
    cache: ResponseCache | None
    remote: bool = True

    def cached(self, key: str) -> bool:
        """True when the run's response cache already holds this request's reply."""
        return self.cache is not None and self.cache.get(key) is not None


def _read_only_cache(cfg: RunConfig) -> ResponseCache | None:
    """The run's cache opened for reading, or None when it does not exist (none created)."""
    if cfg.provider.cache.mode in ("off", "write"):
        return None
    path = (
        Path(cfg.provider.cache.path).expanduser()
        if cfg.provider.cache.path
        else Path(cfg.out) / "cache" / "responses.sqlite"
    )
    return ResponseCache(path, "read") if path.is_file() else None


def estimate_run(cfg: RunConfig) -> DryRunEstimate:
    """Walk the run's questions with recording providers; return what would be sent."""
    from bench.loaders import load_dataset
    from bench.run.answer_prompt import load_answer_prompt
    from bench.run.arm_setup import open_arms
    from bench.run.conversation import answer_step
    from bench.run.ingest import ingest_arms
    from bench.run.pipeline import limit_dataset
    from bench.run.repeats import draw
    from bench.run.settings import arm_specs

    specs = arm_specs(cfg)
    prompt = load_answer_prompt(cfg.answer.prompt)
    dataset = limit_dataset(load_dataset(cfg.dataset), cfg)
    est, cache = DryRunEstimate(), _read_only_cache(cfg)
    with tempfile.TemporaryDirectory(prefix="bench-dry-run-") as tmp:
        providers = _DryProviders(cfg, Path(tmp), est, cache)
        try:
            step = answer_step(cfg, prompt, providers)
            arms = open_arms(specs, cfg, providers, step.tokens, Path(tmp))
            try:
                for conversation in dataset.conversations:
                    failed = ingest_arms(arms, conversation)
                    for question in conversation.questions:
                        for name, arm in arms.items():
                            if name not in failed:
                                context = arm.retrieve(question)
                                result = step.answer(question, context, 0.0)
                                first = step.judge(question, result, rejudge=False)
                                draw(step, step.repeats, question, context, 0.0, first)
            finally:
                for arm in arms.values():
                    arm.close()
        finally:
            providers.close()
            if cache is not None:
                cache.close()
    return est


class _DryProviders:
    """The run's ProviderSet with every remote role swapped for a recorder."""

    def __init__(
        self, cfg: RunConfig, tmp: Path, est: DryRunEstimate, cache: ResponseCache | None
    ) -> None:
        from bench.providers.factory import ProviderSet

        p = cfg.provider
        keyless = {role: replace(getattr(p, role), api_key_env=None)
                   for role in ("answerer", "extractor", "embedder")}  # fmt: skip
        off = replace(p, cache=replace(p.cache, mode="off"), **keyless)  # no key is read
        self._real = ProviderSet(off, tmp)
        self._est, self._cfg = est, cfg
        self._ctx = _Context(TokenCounter(), cache)
        self.answerer = self._wrap(self._real.answerer, "answerer", cfg.provider.answerer)
        self.extractor = (
            None
            if self._real.extractor is None
            else self._wrap(self._real.extractor, "extractor", cfg.provider.extractor)
        )
        self.embedder: Embedder = (
            self._real.embedder
            if cfg.provider.embedder.kind != "openai"
            else _DryEmbedder(self._real.embedder, cfg.provider.embedder, est, self._ctx)
        )

    def judge(self, judge_cfg: Any) -> ChatProvider:
        """The recorder for one LLM judge."""
        keyless = replace(judge_cfg, endpoint=replace(judge_cfg.endpoint, api_key_env=None))
        real = self._real.judge(keyless)
        return self._wrap(real, f"judge:{judge_cfg.judge_id}", judge_cfg.endpoint)

    def _wrap(self, real: Any, role: str, endpoint: EndpointConfig) -> ChatProvider:
        if endpoint.kind != "openai":
            return real  # type: ignore[no-any-return]  # offline: no request to count
        return _DryChat(real, role, endpoint, self._est, self._ctx)

    def close(self) -> None:
        """Close the (never used) clients."""
        self._real.close()
