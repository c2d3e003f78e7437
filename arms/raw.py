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

from dataclasses import dataclass
from typing import Any

from bench import __version__
from bench.arm import ArmServices
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


def kept_turn_ids(conversation: Conversation, cut: int) -> tuple[str, ...]:
    """Ids of the turns the truncated transcript still holds, most recent first.

    A turn counts when it lies wholly after the first `cut` characters (dropped).
    """
    kept: list[str] = []
    position = 0
    for session in conversation.sessions:
        position += len(session.header()) + 1
        for turn in session.turns:
            if position >= cut:
                kept.append(turn.dia_id)
            position += len(turn.render()) + 1
    return tuple(reversed(kept))


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
        """Render (and if needed truncate) the transcript once per conversation."""
        full = render_transcript(conversation)
        budget = self.config.max_context_tokens or self.services.max_context_tokens
        text, truncated = self.services.tokens.truncate_left(full, budget)
        # No items: raw retrieves nothing, its context is the transcript itself.
        self._context = Context(
            text=text,
            truncated=truncated,
            meta={"whole_transcript": True},
            unranked_source_ids=kept_turn_ids(conversation, len(full) - len(text)),
        )
        return {"turns": len(conversation.turns()), "truncated": truncated}

    def retrieve(self, question: AskedQuestion) -> Context:
        """The same transcript for every question of the conversation."""
        if self._context is None:
            raise RuntimeError("raw arm: retrieve() called before ingest()")
        return self._context

    def close(self) -> None:
        """Nothing to release."""
        self._context = None
