"""Where files live: the project's own files, and names built from external ids.

Every file or folder name the harness builds from data (a conversation id, a question
id) goes through `safe_name`, and every path it writes or deletes under a run directory
is checked with `contained` first: a hostile id (`../x`, `/etc`, `.`, `..`, `""`) can
never name a place outside the run directory, nor another conversation's folder.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from bench.errors import ConfigError, ContainmentError

PROJECT_ROOT = Path(__file__).resolve().parent.parent
CONF_DIR = PROJECT_ROOT / "conf"


def resolve_resource(path: str, *, what: str) -> Path:
    """A config-named file: absolute, else relative to cwd, else to the project root."""
    candidate = Path(path).expanduser()
    if candidate.is_absolute():
        found = candidate
    elif candidate.exists():
        found = candidate.resolve()
    else:
        found = PROJECT_ROOT / candidate
    if not found.is_file():
        raise ConfigError(f"{what}={path}: file not found (looked in . and {PROJECT_ROOT})")
    return found


MAX_NAME = 80
"""Longest kept prefix of an id in a name; the whole name stays under 100 characters."""
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def safe_name(external_id: str) -> str:
    """A file/folder name for an external id: safe, unique and readable.

    Characters outside `[A-Za-z0-9._-]` become `_`, a leading `.` becomes `_`, and the
    text is cut to `MAX_NAME` characters. An id that needed none of this is its own
    name; any other gets `-` + the first 10 hex digits of SHA-256(id) appended, so two
    ids that clean up alike (`a:b`, `a/b`) still get different names, and the readable
    part shows which id it was. Never empty, never `.`/`..`, never a separator.

    Examples: `conv-26` → `conv-26`; `conv-26:3` → `conv-26_3-<hash>`;
    `../x` → `_._x-<hash>`; `""` → `_-<hash>`.
    """
    if not isinstance(external_id, str):
        raise TypeError(f"safe_name: id must be a string, got {type(external_id).__name__}")
    cleaned = _UNSAFE.sub("_", external_id)[:MAX_NAME]
    if cleaned.startswith("."):
        cleaned = "_" + cleaned[1:]
    if cleaned == external_id and cleaned:
        return cleaned
    digest = hashlib.sha256(external_id.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"{cleaned or '_'}-{digest}"


def contained(path: Path, root: Path) -> Path:
    """`path` resolved, after checking it lies strictly inside `root` (symlinks followed).

    Call it before every write, rename or delete of a path built from data.

    Raises:
        ContainmentError: the resolved path is `root` itself or outside it.
    """
    resolved = Path(path).resolve()
    base = Path(root).resolve()
    if resolved == base or not resolved.is_relative_to(base):
        raise ContainmentError(
            f"{path}: resolves to {resolved}, outside {base}; refusing to write or delete "
            "there (an id in the dataset names a path; report the dataset)"
        )
    return resolved
