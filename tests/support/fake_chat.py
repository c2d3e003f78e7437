"""One fake chat provider for the tests: prepared replies in order, every call recorded."""

from __future__ import annotations

from typing import Any

from bench.types import ChatResult, Usage


class FakeChat:
    """A ChatProvider that answers with prepared replies in order and records each call.

    A reply is a `ChatResult` (returned as it is), a `str` (returned as a `ChatResult` of
    this model with 100 prompt and 7 completion tokens) or an exception (raised). `calls`
    holds one dict per request: `messages`, `tools`, `prompt_version` and `options`.
    """

    def __init__(self, *replies: ChatResult | str | Exception, model: str = "fake-llm") -> None:
        self.model = model
        self.replies = list(replies)
        self.calls: list[dict[str, Any]] = []

    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        prompt_version: str = "",
        options: Any = None,
    ) -> ChatResult:
        """The next prepared reply (an IndexError when none is left)."""
        self.calls.append(
            {
                "messages": messages,
                "tools": tools,
                "prompt_version": prompt_version,
                "options": options,
            }
        )
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        if isinstance(reply, str):
            return ChatResult(text=reply, model=self.model, usage=Usage(100, 7))
        return reply
