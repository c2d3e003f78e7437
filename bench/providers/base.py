"""The two provider interfaces every arm, answerer, extractor and judge talks to."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypedDict, runtime_checkable

from bench.typed_json import JSONObject
from bench.types import ChatResult

if TYPE_CHECKING:  # importing bench.arm (an arm author's first import) stays light
    import numpy as np

    from bench.config import JudgeConfig

Message = dict[str, Any]
Tool = JSONObject
"""One tool of a chat request, in OpenAI's `{"type": "function", "function": {...}}` form."""


class RequestParams(TypedDict, total=False):
    """The generation parameters a chat request sends (each part of its cache key).

    Sampling mode sends `temperature` and `max_tokens` (`stop` when set); reasoning mode
    `max_completion_tokens` (and `reasoning_effort`); either may add `response_format`.
    """

    temperature: float
    max_tokens: int
    stop: list[str]
    max_completion_tokens: int
    reasoning_effort: str
    response_format: dict[str, object]


@dataclass(frozen=True)
class JsonSchema:
    """A JSON Schema a reply must match (sent as `response_format: json_schema`)."""

    name: str
    """Schema name the server sees (letters, digits, `_` and `-`)."""
    schema: Mapping[str, object]
    """The JSON Schema object itself."""

    def response_format(self) -> dict[str, object]:
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
        tools: list[Tool] | None = None,
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


class ArmModels(Protocol):
    """The models arms are opened with (`bench.run.arm_setup.open_arms`)."""

    @property
    def extractor(self) -> ChatProvider | None:
        """The fact extractor's model; None when extraction is offline (rule-based)."""
        ...

    @property
    def embedder(self) -> Embedder:
        """The embedding model every arm that embeds shares."""
        ...


class RunModels(ArmModels, Protocol):
    """The models a run's steps call: a run's `ProviderSet`, or the dry run's stand-in."""

    @property
    def answerer(self) -> ChatProvider:
        """The model that writes the answers."""
        ...

    def judge(self, cfg: JudgeConfig) -> ChatProvider:
        """The chat model of one LLM judge."""
        ...

    def close(self) -> None:
        """Close every client."""
        ...
