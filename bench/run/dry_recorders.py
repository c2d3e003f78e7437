"""The dry run's recorders: providers that count each request and never send it.

`DryChat` stands in for a chat role and `DryEmbedder` for a remote embedder
(`bench.run.dry_run` explains what is counted and why); `RecorderContext` is what
they share: the tokenizer, the run's cache (read only) and the simulated answerer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from bench.config import EmbedderConfig, EndpointConfig
from bench.providers.base import CallOptions, Message, Tool
from bench.providers.cache import ResponseCache
from bench.run.dry_estimate import DryRunEstimate
from bench.tokens import TokenCounter
from bench.types import ChatResult, Usage

PLACEHOLDER_ANSWER = "unknown"
PLACEHOLDER_VERDICT = '{"reasoning": "dry run", "correct": false, "score": 1}'
"""Parsed by armbench's judges; its `score` lets BEAM's judge ask every rubric item (and,
matching no event, every comparison: an upper bound of its calls)."""


class DryChat:
    """A ChatProvider that counts what the real one would send, and never sends it.

    `dry_run = True` tells an LLM extractor to read its stand-in facts itself
    (`arms.neuromorphic.dry_extract`); bench never imports an arm.
    """

    dry_run = True

    def __init__(
        self, real: Any, role: str, cfg: EndpointConfig, est: DryRunEstimate, ctx: RecorderContext
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
        tools: list[Tool] | None = None,
        prompt_version: str = "",
        options: CallOptions | None = None,
    ) -> ChatResult:
        """Count the request (unless the cache holds it); reply with a placeholder."""
        remote = self._ctx.remote
        key = self._real.request_key(messages, tools, prompt_version, options) if remote else None
        cached = key is not None and self._ctx.cached(key)
        prompt = sum(self._ctx.tokens.count(str(m.get("content") or "")) for m in messages)
        cap = self._real.max_completion(options) if remote else self._cfg.max_tokens
        with self._lock:
            if not cached:  # the high end: identical requests sent again (answers differ)
                self._est.calls += 1
                self._est.prompt_tokens_high += prompt
                self._est.completion_tokens_high += cap
            if key is not None and key in self._seen:  # the real client shares repeats
                return self._reply(messages)
            if key is not None:
                self._seen.add(key)
            if cached:
                self._est.cached += 1
            else:
                self._est.requests += 1
                self._est.prompt_tokens += prompt
                self._est.completion_tokens_max += cap
        return self._reply(messages)

    def _reply(self, messages: list[Message]) -> ChatResult:
        """A verdict for judges; for the answerer the offline answerer's reply to `messages`."""
        if self._est.role.startswith("judge"):
            text = PLACEHOLDER_VERDICT
        elif self._est.role == "answerer":
            text = self._ctx.simulated_answer(messages)
        else:
            text = PLACEHOLDER_ANSWER
        return ChatResult(text=text, model=self.model, usage=Usage(), finish_reason="stop")


class DryEmbedder:
    """An Embedder counting the remote requests while the offline one gives the vectors."""

    def __init__(
        self, real: Any, cfg: EmbedderConfig, est: DryRunEstimate, ctx: RecorderContext
    ) -> None:
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
class RecorderContext:
    """What the recorders share: the tokenizer and a read-only view of the cache."""

    tokens: TokenCounter
    """The run's tokenizer: counts the prompt tokens each request would send."""
    cache: ResponseCache | None
    """The run's response cache, read only; None when the run has none."""
    remote: bool = True
    """Whether the provider is a remote one (its requests are counted); False offline."""

    answerer: Any = None
    """The offline answerer standing in for the remote one (made on first use)."""

    def cached(self, key: str) -> bool:
        """True when the run's response cache already holds this request's reply."""
        return self.cache is not None and self.cache.get(key) is not None

    def simulated_answer(self, messages: list[Message]) -> str:
        """The offline answerer's reply: judge prompts then differ where answers would."""
        if self.answerer is None:
            from bench.providers.offline_answer import OfflineAnswerer

            self.answerer = OfflineAnswerer()
        return str(self.answerer.complete(messages).text)
