"""Structural checks for dataset JSON: one-line DatasetErrors naming file, JSON path and fix."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NoReturn

from bench.errors import DatasetError
from bench.untrusted import MAX_DATASET_BYTES, UntrustedJSONError, read_json

_TYPE_NAMES = {str: "a string", int: "an integer", list: "a list", dict: "an object"}


class FileChecker:
    """Reads one dataset file and raises `<file>: <json path>: <problem>; <fix>` on defects."""

    def __init__(self, path: Path, fix: str) -> None:
        """`fix` is the advice appended to every message (what the user should do)."""
        self.path = path
        self.fix = fix

    def fail(self, where: str, problem: str) -> NoReturn:
        """Raise the one-line DatasetError for a defect at JSON path `where`."""
        location = f"{self.path}: {where}: " if where else f"{self.path}: "
        message = f"{location}{problem}; {self.fix}"
        raise DatasetError(" ".join(message.split()))

    def read_json(self) -> Any:
        """Parse the file (`bench.untrusted`: size, nesting, numbers, UTF-8 bounded).

        Every I/O and JSON failure is one DatasetError naming the file and the fix.
        """
        try:
            return read_json(self.path, limit=MAX_DATASET_BYTES, follow_symlinks=True)
        except UntrustedJSONError as exc:
            self.fail("", exc.what)

    def need(self, obj: dict[str, Any], key: str, kind: type, where: str) -> Any:
        """`obj[key]`, which must exist and have type `kind` (bool is not an integer)."""
        if key not in obj:
            self.fail(where, f"{key!r} missing")
        return self.typed(obj[key], kind, f"{where}.{key}" if where else key)

    def maybe(self, obj: dict[str, Any], key: str, kind: type, where: str) -> Any:
        """`obj[key]` checked against `kind`, or None when absent or null."""
        if obj.get(key) is None:
            return None
        return self.typed(obj[key], kind, f"{where}.{key}" if where else key)

    def typed(self, value: Any, kind: type, where: str) -> Any:
        """`value` itself, after checking it has type `kind`."""
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            name = _TYPE_NAMES.get(kind, kind.__name__)
            self.fail(where, f"must be {name}, got {type(value).__name__} ({_short(value)})")
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as exc:  # a lone surrogate from a `\ud800` escape
                self.fail(where, f"not valid Unicode text ({exc.reason} at {exc.start})")
        return value


def _short(value: Any) -> str:
    """A JSON rendering of `value` cut to 40 characters, for error messages."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."
