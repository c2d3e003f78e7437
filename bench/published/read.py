"""Reading published files: JSON, JSON Lines, typed fields, one-line errors. Stdlib only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.published.model import PublishedError
from bench.untrusted import MAX_DATASET_BYTES, UntrustedJSONError, read_json, read_json_lines

_KINDS = {str: "a string", dict: "an object", list: "a list", bool: "true or false"}


_FIX = "pass the published results file as published"


def load_json(path: Path) -> Any:
    """The parsed JSON document of `path` (`bench.untrusted`: bounded, one-line errors)."""
    try:
        return read_json(path, limit=MAX_DATASET_BYTES, follow_symlinks=True, fix=_FIX)
    except UntrustedJSONError as exc:
        raise PublishedError(str(exc)) from None


def load_entries(path: Path) -> list[tuple[str, Any]]:
    """(where, entry) of a JSON Lines file, or of a JSON list (LongMemEval reads both).

    Upstream's evaluator tries JSON Lines first and falls back to one JSON document;
    so does this. Blank lines are skipped.
    """
    try:
        return [(f"line {n}", entry) for n, entry in read_json_lines(path, fix=_FIX)]
    except UntrustedJSONError:
        data = load_json(path)  # the one-line error of the whole file, or its list
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
