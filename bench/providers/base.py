"""The two provider interfaces every arm, answerer, extractor and judge talks to."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from bench.types import ChatResult

if TYPE_CHECKING:  # importing bench.arm (an arm author's first import) stays light
    import numpy as np

Message = dict[str, Any]


@dataclass(frozen=True)
class JsonSchema:
    """A JSON Schema a reply must match (sent as `response_format: json_schema`)."""

    name: str
    """Schema name the server sees (letters, digits, `_` and `-`)."""
    schema: dict[str, Any]
    """The JSON Schema object itself."""

    def response_format(self) -> dict[str, Any]:
        """The OpenAI `response_format` body (llama.cpp and vLLM accept the same shape)."""
        return {
            "type": "json_schema",
            "json_schema": {"name": self.name, "schema": self.schema, "strict": True},
        }


@dataclass(frozen=True)
class CallOptions:
    """Per-call settings beyond the endpoint's own; each is part of the cache key."""

    max_tokens: int | None = None
    """Completion cap for this call; None means the endpoint's `max_tokens`. The lower of
    the two is sent."""
    stop: tuple[str, ...] = ()
    """Stop sequences (at most 4, OpenAI's limit); empty sends none."""
    json_schema: JsonSchema | None = None
    """Constrain the reply to this schema; sent only when the endpoint's `json_schema`
    flag says the server honours it (see `supports_json_schema`)."""


def supports_json_schema(chat: object) -> bool:
    """True when `chat` sends `CallOptions.json_schema` to a server that honours it."""
    return bool(getattr(chat, "json_schema", False))


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
        options: CallOptions | None = None,
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
