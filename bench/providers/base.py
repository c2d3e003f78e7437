"""The two provider interfaces every arm, answerer, extractor and judge talks to."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from bench.types import ChatResult

Message = dict[str, Any]


@runtime_checkable
class ChatProvider(Protocol):
    """Turns a list of chat messages into one completion."""

    model: str

    def complete(
        self,
        messages: list[Message],
        *,
        tools: list[dict[str, Any]] | None = None,
        prompt_version: str = "",
    ) -> ChatResult:
        """Return the completion; raise `ProviderError` when it finally fails."""
        ...


@runtime_checkable
class Embedder(Protocol):
    """Maps texts to L2-normalised float32 vectors of a fixed dimension."""

    model: str
    dim: int

    def embed(self, texts: list[str]) -> np.ndarray:
        """Return an array of shape (len(texts), dim), rows L2-normalised."""
        ...
