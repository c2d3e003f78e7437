"""The project's hashes of JSON-able values: one canonical form for each use.

`stable_hash` names configurations and contents (checkpoint fingerprints, config
hashes, store content ids): SHA-256 of `json.dumps(value, sort_keys=True, default=str)`,
first 16 hex digits. `content_key` keys the response cache: the full SHA-256 of the
compact, non-ASCII-preserving form, so two requests share a key iff they are equal.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Protocol


def stable_hash(payload: object, length: int = 16) -> str:
    """SHA-256 (first `length` hex digits) of a JSON-able value with sorted keys."""
    blob = json.dumps(payload, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:length]


def stable_hash_items(items: Iterable[object], length: int = 16) -> str:
    """`stable_hash(list(items))`, fed item by item: the list's JSON is never held whole.

    `json.dumps` writes a list as "[" + ", ".join(each item's own dumps) + "]" (default
    separators), so hashing those pieces in order gives the same digest; a rag store's
    chunk texts (twice a 10M-token transcript) are hashed without a second copy.
    """
    digest = hashlib.sha256()
    _feed_list(digest, items)
    return digest.hexdigest()[:length]


def stable_hash_lists(lists: Iterable[Iterable[object]], length: int = 16) -> str:
    """`stable_hash([list(each) for each in lists])`, every inner list fed item by item.

    The outer list is written as `stable_hash_items` writes one ("[", ", " between, "]"),
    each inner one likewise: a library arm's rendered messages and their turn ids are
    hashed without a list of every rendered message.
    """
    digest = hashlib.sha256(b"[")
    for i, items in enumerate(lists):
        digest.update(b", " if i else b"")
        _feed_list(digest, items)
    digest.update(b"]")
    return digest.hexdigest()[:length]


class _Digest(Protocol):
    """What `_feed_list` needs of a hashlib object."""

    def update(self, data: bytes, /) -> None:
        """Feed `data` to the digest."""


def _feed_list(digest: _Digest, items: Iterable[object]) -> None:
    """Feed `json.dumps(list(items))` (default separators, sorted keys) piece by piece."""
    digest.update(b"[")
    for i, item in enumerate(items):
        piece = json.dumps(item, sort_keys=True, default=str)
        digest.update(((", " if i else "") + piece).encode())
    digest.update(b"]")


def content_key(parts: Mapping[str, object]) -> str:
    """Full SHA-256 hex of the canonical compact JSON of `parts` (sorted keys)."""
    canonical = json.dumps(parts, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def text_sha256(text: str) -> str:
    """Full SHA-256 hex of a text's UTF-8 bytes (prompt files, judge prompts)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
