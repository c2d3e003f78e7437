"""Rollback and replay: which events are live, and the state they fold into.

A `rollback {to_turn: N}` event voids every earlier-logged event with turn > N; events
logged after it form the new timeline. Nothing is deleted: history stays readable.
"""

from __future__ import annotations

from collections.abc import Mapping

from arms.neuromorphic.records import Event, FactRow
from arms.neuromorphic.state import MemoryState


def live_events(events: list[Event]) -> list[Event]:
    """The events that make up the current timeline, in log order."""
    live: list[Event] = []
    for event in events:
        if event.kind == "rollback":
            cut = int(event.payload["to_turn"])
            live = [e for e in live if e.turn <= cut]
        else:
            live.append(event)
    return live


def replay(
    events: list[Event], facts: Mapping[int, FactRow], dim: int, *, hot: bool = True
) -> MemoryState:
    """Fold the live events into a fresh state (hot set too unless `hot=False`)."""
    state = MemoryState(dim)
    for event in live_events(events):
        state.apply(event, facts, hot=hot)
    return state


def current_turn(events: list[Event]) -> int:
    """The clock after the live events: the last exchange's turn, or the rollback point."""
    turn = 0
    for event in events:
        if event.kind == "rollback":
            turn = min(turn, int(event.payload["to_turn"]))
        elif event.kind == "exchange":
            turn = max(turn, event.turn)
    return turn
