"""Deterministic replies of the fault server: offline answers, judge verdicts, echoes."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

ChatFn = Callable[[list[dict[str, Any]]], str]


@functools.cache
def offline_chat_fn() -> ChatFn:
    """Answer as the offline answerer does, warmed up so the first reply is fast."""
    from bench.providers.offline_answer import OfflineAnswerer

    answerer = OfflineAnswerer()
    warm = "<CONTEXT>\n[Session 1 — 8 May 2023]\nA: I went to the park yesterday.\n</CONTEXT>"
    answerer.complete([{"role": "system", "content": warm}, {"role": "user", "content": "When?"}])
    return lambda messages: answerer.complete(messages).text


def judge_reply(user_text: str) -> str | None:
    """A JSON verdict for a judge-shaped prompt (`Gold answer:` / `Model's answer:`), else None.

    Correct when either answer, lower-cased, contains the other: crude but deterministic.
    """
    fields = {}
    for line in user_text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() in ("Gold answer", "Model's answer"):
            fields[key.strip()] = value.strip().lower()
    if len(fields) < 2:
        return None
    gold, answer = fields["Gold answer"], fields["Model's answer"]
    correct = bool(answer) and (gold in answer or answer in gold)
    return json.dumps({"reasoning": "containment check", "correct": correct})


def deterministic_chat_fn(messages: list[dict[str, Any]]) -> str:
    """Judge-shaped prompts get a JSON verdict; everything else the offline answer."""
    user = next((str(m.get("content")) for m in reversed(messages) if m.get("role") == "user"), "")
    return judge_reply(user) or offline_chat_fn()(messages)


def echo_chat_fn(messages: list[dict[str, Any]]) -> str:
    """A cheap deterministic reply for unit tests: `echo: <last message>`."""
    return "echo: " + str(messages[-1].get("content", "")) if messages else "echo:"
