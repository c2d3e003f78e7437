"""Wrappers that put the offline (in-process) providers through the same accounting.

Offline calls are deterministic and free, so they are never cached; they are counted
(calls, latency, errors) like any other call, with zero HTTP requests.
"""

from __future__ import annotations

import time

import numpy as np

from bench.providers.accounting import Accountant
from bench.providers.base import CallOptions, ChatProvider, Embedder, Message, Tool
from bench.types import ChatResult


class AccountedChat:
    """A `ChatProvider` that records each call of an in-process provider."""

    def __init__(self, inner: ChatProvider, *, role: str, accountant: Accountant) -> None:
        self.model = inner.model
        self.inner = inner
        self._role = role
        self._accountant = accountant

    def complete(
        self,
        messages: list[Message],
        *,
        tools: list[Tool] | None = None,
        prompt_version: str = "",
        options: CallOptions | None = None,
    ) -> ChatResult:
        """Delegate, then record the call (also when it raises)."""
        started = time.perf_counter()
        failed = True
        try:
            result = self.inner.complete(
                messages, tools=tools, prompt_version=prompt_version, options=options
            )
            failed = False
            return result
        finally:
            latency = (time.perf_counter() - started) * 1000.0
            self._accountant.record(self._role, self.model, failed=failed, latency_ms=latency)


class AccountedEmbedder:
    """An `Embedder` that records each call of an in-process embedder."""

    def __init__(self, inner: Embedder, *, role: str, accountant: Accountant) -> None:
        self.model = inner.model
        self.dim = inner.dim
        self.inner = inner
        self._role = role
        self._accountant = accountant

    def embed(self, texts: list[str]) -> np.ndarray:
        """Delegate, then record the call (also when it raises)."""
        started = time.perf_counter()
        failed = True
        try:
            vectors = self.inner.embed(texts)
            failed = False
            return vectors
        finally:
            latency = (time.perf_counter() - started) * 1000.0
            self._accountant.record(self._role, self.model, failed=failed, latency_ms=latency)
