"""Reading published files: JSON, JSON Lines, typed fields, one-line errors. Stdlib only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench.published.model import PublishedError

_KINDS = {str: "a string", dict: "an object", list: "a list", bool: "true or false"}


def read_text(path: Path) -> str:
    """The file's text (UTF-8); a missing or unreadable file is one PublishedError."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PublishedError(f"{path}: file not found: pass the published results file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PublishedError(f"{path}: cannot be read ({exc}): pass a UTF-8 file") from None


def load_json(path: Path) -> Any:
    """The parsed JSON document of `path`."""
    try:
        return json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise PublishedError(
            f"{path}: invalid JSON at line {exc.lineno} column {exc.colno} ({exc.msg}): "
            "pass the file as published"
        ) from None


def load_entries(path: Path) -> list[tuple[str, Any]]:
    """(where, entry) of a JSON Lines file, or of a JSON list (LongMemEval reads both).

    Upstream's evaluator tries JSON Lines first and falls back to one JSON document;
    so does this. Blank lines are skipped.
    """
    text = read_text(path)
    try:
        return [
            (f"line {n}", json.loads(line))
            for n, line in enumerate(text.splitlines(), 1)
            if line.strip()
        ]
    except json.JSONDecodeError:
        data = load_json(path)
    if not isinstance(data, list):
        raise PublishedError(f"{path}: neither JSON Lines nor a JSON list of entries")
    return [(f"entry {n}", item) for n, item in enumerate(data)]


def need(path: Path, obj: dict[str, Any], key: str, kind: type, where: str) -> Any:
    """`obj[key]`, which must be present and of type `kind`."""
    if key not in obj:
        raise PublishedError(f"{path}: {where}: {key!r} missing: pass the file as published")
    value = obj[key]
    if not isinstance(value, kind):
        raise PublishedError(
            f"{path}: {where}.{key} must be {_KINDS.get(kind, kind.__name__)}, "
            f"got {type(value).__name__}"
        )
    return value
