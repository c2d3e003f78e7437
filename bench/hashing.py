"""The project's hashes of JSON-able values: one canonical form for each use.

`stable_hash` names configurations and contents (checkpoint fingerprints, config
hashes, store content ids): SHA-256 of `json.dumps(value, sort_keys=True, default=str)`,
first 16 hex digits. `content_key` keys the response cache: the full SHA-256 of the
compact, non-ASCII-preserving form, so two requests share a key iff they are equal.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def stable_hash(payload: Any, length: int = 16) -> str:
    """SHA-256 (first `length` hex digits) of a JSON-able value with sorted keys."""
    blob = json.dumps(payload, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:length]


def content_key(parts: dict[str, Any]) -> str:
    """Full SHA-256 hex of the canonical compact JSON of `parts` (sorted keys)."""
    canonical = json.dumps(parts, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def text_sha256(text: str) -> str:
    """Full SHA-256 hex of a text's UTF-8 bytes (prompt files, judge prompts)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
