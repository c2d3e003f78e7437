"""Rollback and replay: which events are live, and the state they fold into.

A `rollback {to_turn: N}` event voids every earlier-logged event with turn > N (and a
`rollback {to_seq: S}` every one logged after event S); events logged after it form
the new timeline. Nothing is deleted: history stays readable.
`tally` recounts the state counters of the live timeline, so after a rollback they
equal those of a run that stopped at turn N.
"""

from __future__ import annotations

from collections.abc import Mapping

from arms.neuromorphic.archive_index import FactSource
from arms.neuromorphic.records import Event, FactRow
from arms.neuromorphic.state import MemoryState


def live_events(events: list[Event]) -> list[Event]:
    """The events that make up the current timeline, in log order."""
    live: list[Event] = []
    for event in events:
        if event.kind == "rollback" and "to_seq" in event.payload:
            cut = int(event.payload["to_seq"])
            live = [e for e in live if e.seq <= cut]
        elif event.kind == "rollback":
            cut = int(event.payload["to_turn"])
            live = [e for e in live if e.turn <= cut]
        else:
            live.append(event)
    return live


def replay(
    events: list[Event],
    facts: Mapping[int, FactRow],
    dim: int,
    *,
    hot: bool = True,
    source: FactSource | None = None,
) -> MemoryState:
    """Fold the live events into a fresh state (hot set too unless `hot=False`).

    `source`: as `MemoryState`'s; `facts` come from it, so the index stops holding
    them once folded.
    """
    state = MemoryState(dim, source)
    for event in live_events(events):
        state.apply(event, facts, hot=hot)
    state.index.facts.settle()
    return state


EVENT_COUNTERS = {
    "insert": "facts",
    "supersede": "superseded",
    "delete": "pruned_deleted",
    "archive": "pruned_archived",
    "reinforce": "reinforced",
    "elevate": "elevated",
}
"""Event kind → the engine counter that adds up its record ids."""


def tally(events: list[Event], facts: Mapping[int, FactRow]) -> dict[str, int]:
    """The state counters of the live timeline (exchanges, facts, superseded, ...)."""
    counts = dict.fromkeys(["exchanges", *EVENT_COUNTERS.values(), "links_dropped"], 0)
    related: dict[int, int] = {}
    for event in live_events(events):
        if event.kind == "exchange":
            counts["exchanges"] += 1
        elif event.kind in EVENT_COUNTERS:
            counts[EVENT_COUNTERS[event.kind]] += len(event.payload["ids"])
        elif event.kind == "relink":
            for key, names in event.payload["links"].items():
                fid = int(key)
                before = related.get(fid, len(facts[fid].related))
                counts["links_dropped"] += before - len(names)
                related[fid] = len(names)
    return counts
