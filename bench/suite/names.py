"""File-name-safe forms of names that come from data (suite and arm names)."""

from __future__ import annotations


def safe_file_name(name: str) -> str:
    """Letters, digits and `-_.` kept, anything else `_`; never empty, `.` or `..`.

    Local stand-in for bench.paths.safe_name (safety helper, issue 8) until merge.
    """
    cleaned = "".join(c if c.isalnum() or c in "-_." else "_" for c in name).strip(".")
    return cleaned or "_"
