"""Deterministic replies of the fault server: offline answers, judge verdicts, echoes."""

from __future__ import annotations

import functools
import json
import re
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
    """Judge-shaped prompts (also re-asked ones) get a JSON verdict; else the offline answer."""
    users = [str(m.get("content")) for m in reversed(messages) if m.get("role") == "user"]
    verdict = next((v for u in users if (v := judge_reply(u)) is not None), None)
    return verdict or offline_chat_fn()(messages)


SAMPLED_WRONG_ANSWER = "Somewhere else, some other time."
"""What a varied answer becomes in the fault server's sampling mode."""


def vary_reply(reply: str) -> str:
    """The reply a sampling model might have given instead: a JSON verdict flipped, else
    a fixed wrong answer (or, when the reply was that answer, the original is unknown:
    `I don't know`)."""
    try:
        verdict = json.loads(reply)
    except ValueError:
        verdict = None
    if isinstance(verdict, dict) and isinstance(verdict.get("correct"), bool):
        return json.dumps({**verdict, "correct": not verdict["correct"]})
    return SAMPLED_WRONG_ANSWER if reply != SAMPLED_WRONG_ANSWER else "I don't know"


def echo_chat_fn(messages: list[dict[str, Any]]) -> str:
    """A cheap deterministic reply for unit tests: `echo: <last message>`."""
    return "echo: " + str(messages[-1].get("content", "")) if messages else "echo:"


def update_memory_arguments(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """Tool arguments for an `update_memory` call: the offline rule extractor's facts.

    The exchange is read back from the user message (`New exchange:` then the session
    header and `Speaker: text` lines); anything unreadable yields `{"items": []}`.
    """
    user = next((str(m.get("content")) for m in reversed(messages) if m.get("role") == "user"), "")
    exchange = _exchange_from_text(user.partition("New exchange:\n")[2])
    if exchange is None:
        return {"items": []}
    from arms.neuromorphic.dry_extract import rule_arguments

    return rule_arguments(exchange)


_HEADER = re.compile(r"^\[Session (\d+) — (.+)\]$")
_PHOTO = re.compile(r"^(.*) \[shares a photo: (.*)\]$")


def _exchange_from_text(text: str) -> Any:
    """The `Exchange` whose `text()` is `text`, or None."""
    from arms.neuromorphic.exchange import Exchange
    from bench.types import Turn

    lines = text.strip().splitlines()
    header = _HEADER.match(lines[0]) if lines else None
    if header is None:
        return None
    session, date = int(header.group(1)), header.group(2)
    turns = []
    for i, line in enumerate(lines[1:]):
        speaker, sep, said = line.partition(": ")
        if not sep:
            return None
        photo = _PHOTO.match(said)
        caption = photo.group(2) if photo else None
        said = photo.group(1) if photo else said
        turns.append(Turn(speaker, said, f"D{session}:{i + 1}", session, caption))
    return Exchange(session, date, tuple(turns))
