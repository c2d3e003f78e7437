"""The benchmark markers a live arm writes with every turn, and how they are read back.

A marker is `<unit tag>/<dia_id>`: the turn's id, prefixed by a short tag of the unit
(conversation) it belongs to and of the run (its nonce, kept in `state.json`). It travels
as the message `id` / `metadata.bench` or as `[bench:<marker>]` appended to the text.
The tag lets an arm tell an item of its own namespace from one that any other namespace
holds: another unit's of this run (LoCoMo turn ids such as `D1:3` repeat in every
conversation, so the bare id cannot), or any namespace of another run, even of the same
conversation.
"""

from __future__ import annotations

import hashlib
import re

MARKER = re.compile(r"\s*\[bench:([^\]\s]+)\]")
"""A marker in an item's text (stripped from what the answerer sees)."""
TAG = re.compile(r"u[0-9a-f]{10}")
"""A unit tag, as `unit_tag` makes it."""


def unit_tag(unit: str, nonce: str) -> str:
    """A unit's marker tag: `u` + the first 10 hex of SHA-256(`<nonce>/<unit id>`).

    Stable within a run and its resumes (the nonce is kept in `state.json`), different
    in every other run; free of `/`, `]` and space.
    """
    return "u" + hashlib.sha256(f"{nonce}/{unit}".encode()).hexdigest()[:10]


def unit_marker(unit: str, dia_id: str, nonce: str) -> str:
    """The marker written with turn `dia_id` of `unit`: `<unit tag>/<dia_id>`."""
    return f"{unit_tag(unit, nonce)}/{dia_id}"


def split_marker(marker: str) -> tuple[str | None, str]:
    """`(tag, dia_id)` of a marker; `(None, marker)` for one without a unit tag."""
    head, sep, rest = marker.partition("/")
    if sep and TAG.fullmatch(head):
        return head, rest
    return None, marker
