"""Ids of stitched haystacks: which conversation a haystack is built on."""

from __future__ import annotations

HOST_SEPARATOR = "@"
"""Joins a stitched haystack's own id to the conversation it is built on: LoCoMo-Plus
`plus-000@conv-26` (bench/loaders/locomo_plus.py)."""


def host_conversation(conversation_id: str) -> str:
    """The conversation a haystack is built on: after the last `@`, else the id itself.

    The cluster of clustered inference (bench/summarise/clustered.py): LoCoMo-Plus
    haystacks stitched into one LoCoMo conversation share most of their store.
    """
    return conversation_id.rpartition(HOST_SEPARATOR)[2]
