"""Reading a memory service's replies: dotted paths, request templates, item markers.

A service is someone else's program: a reply that lacks a configured field is a
`ContractError` naming the endpoint and the setting to fix, never a KeyError.
"""

from __future__ import annotations

import re
from typing import Any

from arms.live_markers import MARKER
from bench.errors import BenchError


class ContractError(BenchError):
    """The service answered, but not in the configured shape (or refused the request)."""


class CrossNamespaceError(ContractError):
    """A search returned an item another unit's namespace holds (a retrieval-health error)."""


def at(data: Any, path: str, where: str, setting: str) -> Any:
    """The value at dotted `path` in `data`; ContractError when any step is missing."""
    value = data
    for step in path.split(".") if path else []:
        if isinstance(value, dict) and step in value:
            value = value[step]
        elif isinstance(value, list) and step.isdigit() and int(step) < len(value):
            value = value[int(step)]
        else:
            raise ContractError(
                f"contract mismatch at {where}: no field '{path}' in the response; "
                f"fix {setting} to match the service"
            )
    return value


def fill(template: Any, values: dict[str, Any]) -> Any:
    """The request body: `"{name}"` alone becomes the typed value, else str.format."""
    if isinstance(template, dict):
        return {k: fill(v, values) for k, v in template.items()}
    if isinstance(template, list):
        return [fill(v, values) for v in template]
    if isinstance(template, str):
        whole = re.fullmatch(r"\{(\w+)\}", template)
        if whole:
            return values.get(whole.group(1))
        return template.format(**values)
    return template


def markers_of(entry: Any, text: str, marker_path: str | None) -> list[str]:
    """Unit ids named by an item: its metadata marker(s), then `[bench:..]` in its text."""
    found: list[str] = []
    value = lookup(entry, marker_path) if marker_path else None
    for v in value if isinstance(value, list) else [value]:
        if v is None:
            continue
        inner = MARKER.findall(str(v))
        found.extend(inner or [str(v)])
    found.extend(MARKER.findall(text))
    return found


def lookup(entry: Any, path: str) -> Any:
    """The value at `path` in an item, or None when the item lacks it."""
    try:
        return at(entry, path, "", "")
    except ContractError:
        return None  # an item without metadata may still carry the marker in its text
