"""raw: the whole transcript in the context.

The context block the answerer sees (worked example)::

    [Session 1 — 1:56 pm on 8 May, 2023]
    Caroline: Hey Mel! Good to see you! How have you been?
    Melanie: Hey Caroline! ... [shares a photo: a painting of a sunset]
    [Session 2 — 1:14 pm on 25 May, 2023]
    ...

When the transcript exceeds `max_context_tokens`, the most recent part is kept and
the record says so (`context_truncated: true`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from bench import __version__
from bench.arm import ArmServices
from bench.tokens import TokenCounter
from bench.types import AskedQuestion, Context, Conversation


@dataclass
class RawConfig:
    """Options of the raw arm (none beyond the shared answer budget)."""

    kind: str = "raw"
    """Registered arm kind; always `raw`."""
    max_context_tokens: int | None = None
    """Overrides `answer.max_context_tokens` for this arm when set."""


def render_transcript(conversation: Conversation) -> str:
    """Every session as a dated header followed by its turns, in session order."""
    return conversation.transcript()


def _lines_from_end(conversation: Conversation) -> Iterator[tuple[str, str | None]]:
    """The transcript's lines, last first, each with its turn's dia_id (None: a header)."""
    for session in reversed(conversation.sessions):
        for turn in reversed(session.turns):
            yield turn.render(), turn.dia_id
        yield session.header(), None


def transcript_tail(
    conversation: Conversation, tokens: TokenCounter, budget: int
) -> tuple[str, bool, tuple[str, ...]]:
    r"""`tokens.truncate_left(render_transcript(c), budget)` without rendering the rest.

    Returns (text, truncated, ids of the turns wholly kept, most recent first). Lines
    are counted from the end as `truncate_left` counts them (a line after a break adds
    `count("\n" + line) − 1` tokens) until the lines from i on hold more than `budget`
    tokens; the cut then falls inside line i or at its end, so truncating lines i−1 … n
    (line i−1 first, never reached by the cut) gives exactly the full transcript's
    tail. Only about `budget` tokens of the transcript are ever rendered: a 10M-token
    conversation costs what its last 128K tokens cost.
    """
    lines: list[tuple[str, str | None]] = []
    kept = 0
    for line, dia_id in _lines_from_end(conversation):
        lines.append((line, dia_id))
        if len(lines) > 1 and kept > budget:
            break  # lines[-2] is line i, lines[-1] line i-1
        kept += tokens.count("\n" + line) - 1
    lines.reverse()
    sub = "\n".join(line for line, _ in lines)
    text, truncated = tokens.truncate_left(sub, budget)
    cut, position, ids = len(sub) - len(text), 0, []
    for line, dia_id in lines:
        if dia_id is not None and position >= cut:
            ids.append(dia_id)
        position += len(line) + 1
    return text, truncated, tuple(reversed(ids))


class RawArm:
    """Puts the full transcript (or its most recent part) in front of the answerer."""

    def __init__(self, name: str, config: RawConfig, services: ArmServices) -> None:
        self.name = name
        self.config = config
        self.services = services
        self._context: Context | None = None

    def fingerprint(self) -> dict[str, Any]:
        """Raw builds no store; the fingerprint is for the record only."""
        return {"kind": "raw", "version": __version__, "config": vars(self.config)}

    def ingest(self, conversation: Conversation) -> dict[str, Any]:
        """Render the transcript's tail that fits the budget, once per conversation."""
        budget = self.config.max_context_tokens or self.services.max_context_tokens
        text, truncated, kept = transcript_tail(conversation, self.services.tokens, budget)
        # No items: raw retrieves nothing, its context is the transcript itself.
        self._context = Context(
            text=text,
            truncated=truncated,
            meta={"whole_transcript": True},
            unranked_source_ids=kept,
        )
        return {"turns": sum(len(s.turns) for s in conversation.sessions), "truncated": truncated}

    def retrieve(self, question: AskedQuestion) -> Context:
        """The same transcript for every question of the conversation."""
        if self._context is None:
            raise RuntimeError("raw arm: retrieve() called before ingest()")
        return self._context

    def close(self) -> None:
        """Nothing to release."""
        self._context = None
