"""The engine's clock tick: one speaker_a turn plus the speaker_b turns that follow it.

A session that opens with speaker_b starts its own exchange with its own session date,
so no turn is ever glued onto the previous session (methodology §4, §7.9).
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.types import Conversation, Turn


@dataclass(frozen=True)
class Exchange:
    """One clock tick of the engine: dated turns from a single session."""

    session: int
    """1-based index of the session the turns come from."""
    date_time: str
    """The session's date/time as the dataset writes it."""
    turns: tuple[Turn, ...]
    """The exchange's turns in spoken order."""

    def header(self) -> str:
        """`[Session <n> — <date>]`, as every arm heads this session."""
        return f"[Session {self.session} — {self.date_time}]"

    def text(self) -> str:
        """The header and the rendered turns, one per line."""
        return "\n".join([self.header(), *(t.render() for t in self.turns)])

    def dia_ids(self) -> tuple[str, ...]:
        """The ids of the turns in this exchange."""
        return tuple(t.dia_id for t in self.turns)


def exchanges(conversation: Conversation) -> list[Exchange]:
    """Split a conversation into exchanges; `speakers[0]` is speaker_a."""
    speaker_a = conversation.speakers[0] if conversation.speakers else None
    out: list[Exchange] = []
    for session in conversation.sessions:
        current: list[Turn] = []
        for turn in session.turns:
            if turn.speaker == speaker_a and current:
                out.append(Exchange(session.index, session.date_time, tuple(current)))
                current = []
            current.append(turn)
        if current:
            out.append(Exchange(session.index, session.date_time, tuple(current)))
    return out
