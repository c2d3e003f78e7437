"""The items that closed in a schema reply cut off at the completion cap.

A small model under a JSON grammar often writes well-formed items and is then cut off
inside a later one (`{"items": [{...}, {...}, {"entity_na`). The closed items are what
the grammar let it write, item for item, so they are kept; the cut is still reported
(`truncated`, with how many items were kept), never passed off as a complete reply.

Only the schema's own shape is recovered: an object whose first key is `items`, holding
an array of objects. The kept prefix, closed with `]}`, goes through the one untrusted
reader (`bench.untrusted.parse_json`), so its bounds on nesting and numbers hold here too.
"""

from __future__ import annotations

import json
import re
from typing import Any

from bench.untrusted import UntrustedJSONError, parse_json

_OPENING = re.compile(r'\s*\{\s*"items"\s*:\s*\[')
_SPACE = re.compile(r"\s*")
_DECODER = json.JSONDecoder()


def _skip_space(text: str, pos: int) -> int:
    space = _SPACE.match(text, pos)
    return space.end() if space else pos


def closed_prefix_end(text: str) -> int:
    """Offset just past the last item that closed in a cut `{"items": [...` reply, or 0.

    Items are read one at a time (`JSONDecoder.raw_decode`); reading stops at the first
    that does not parse, is not an object, or is not followed by a comma.
    """
    opening = _OPENING.match(text)
    if opening is None:
        return 0
    pos, end = opening.end(), 0
    while True:
        start = _skip_space(text, pos)
        try:
            item, after = _DECODER.raw_decode(text, start)
        except (ValueError, RecursionError):
            return end
        if not isinstance(item, dict):
            return end
        end = after
        pos = _skip_space(text, after)
        if text[pos : pos + 1] != ",":
            return end
        pos += 1


def closed_items(text: str) -> list[Any]:
    """The items that closed before the cut (empty when none did or the shape is other)."""
    end = closed_prefix_end(text)
    if not end:
        return []
    try:
        data = parse_json(text[:end] + "]}", "cut extraction reply")
    except UntrustedJSONError:
        return []
    items = data.get("items") if isinstance(data, dict) else None
    return items if isinstance(items, list) else []
