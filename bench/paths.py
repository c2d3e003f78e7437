"""Where the project's own files live, independent of the working directory."""

from __future__ import annotations

from pathlib import Path

from bench.errors import ConfigError

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
