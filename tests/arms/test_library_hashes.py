"""The library arms' content fingerprints are streamed: same digest, no second copy (issue 39).

mem0 and graphiti hashed a list of every rendered turn, and that list stayed alive through
the whole build (the local of `ingest`): a second copy of the conversation. The digests
must stay what they were, so a finished store is still reused.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable

from arms.library import graphiti, mem0
from bench.hashing import stable_hash
from bench.types import Conversation, Session, Turn

WORDS = 400
"""Words per turn: ~2.4 KB of text each."""


def long_conversation(sessions: int = 20, turns: int = 50) -> Conversation:
    """`sessions` x `turns` turns of distinct ~2.4 KB texts, two speakers."""
    made = []
    for s in range(1, sessions + 1):
        said = tuple(
            Turn("Ann" if t % 2 else "Bo", f"s{s}t{t} " + "word " * WORDS, f"D{s}:{t}", s)
            for t in range(1, turns + 1)
        )
        made.append(Session(s, f"{s} May 2023", said))
    return Conversation("c1", ("Ann", "Bo"), tuple(made), ())


def peak_bytes(fn: Callable[[], object]) -> int:
    """Peak traced allocation while `fn()` runs."""
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_mem0_turns_hash_is_the_old_digest_without_the_message_list() -> None:
    conv = long_conversation()
    turns = conv.turns()
    old = stable_hash([[mem0.turn_message(conv, t) for t in turns], [t.dia_id for t in turns]])
    assert mem0.turns_hash(conv, turns) == old
    text = sum(len(t.text) for t in turns)  # ~2.4 MB
    assert peak_bytes(lambda: mem0.turns_hash(conv, turns)) < text // 20


def test_graphiti_turns_hash_is_the_old_digest_without_the_content_list() -> None:
    conv = long_conversation()
    turns = conv.turns()
    old = stable_hash([[t.dia_id, t.render(), t.session] for t in turns])
    assert graphiti.turns_hash(turns) == old
    text = sum(len(t.text) for t in turns)
    assert peak_bytes(lambda: graphiti.turns_hash(turns)) < text // 20


def test_neuromorphic_conversation_hash_is_the_old_digest_streamed() -> None:
    """The engine's conversation fingerprint, fed a session at a time: same digest (a store
    ingested before is still recognised), a peak of about one session's JSON, not all."""
    from dataclasses import asdict

    from arms.neuromorphic.arm import conversation_hash

    conv = long_conversation()
    old = stable_hash(
        [
            conv.speakers,
            [(s.index, s.date_time, [asdict(t) for t in s.turns]) for s in conv.sessions],
        ]
    )
    assert conversation_hash(conv) == old
    text = sum(len(t.text) for t in conv.turns())  # ~2.4 MB over 20 sessions
    assert peak_bytes(lambda: conversation_hash(conv)) < text // 4
