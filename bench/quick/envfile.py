"""A `.env` file: `NAME=value` lines (comments, blank lines, `export ` and quotes allowed).

The quick path reads `ANSWER_MODEL`, `ANSWER_BASE_URL`, `EVAL_MODEL`, `EVAL_BASE_URL` from
it as flag defaults; every other name (a key such as `OPENAI_API_KEY`) goes only to the
run's environment, never to the command it prints. The file is the user's, not the
harness's: read as a regular file of bounded size, one line per malformed entry.
"""

from __future__ import annotations

import re
from pathlib import Path

from bench.errors import ConfigError
from bench.files import read_file_bytes

MAX_ENV_BYTES = 1 << 20
"""Largest `.env` file read (1 MiB)."""

_LINE = re.compile(r"(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)")


def read_env_file(path: Path) -> dict[str, str]:
    """`NAME -> value` of an env file; ConfigError (one line) names a malformed line."""
    try:
        text = read_file_bytes(str(path), MAX_ENV_BYTES, follow_symlinks=True).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(
            f"--env-file {path}: unreadable ({exc}): fix or pass another file"
        ) from None
    values: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = _LINE.fullmatch(line)
        if match is None:
            raise ConfigError(f"{path}:{number}: not NAME=value: fix the line or remove it")
        value = match.group(2).strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        values[match.group(1)] = value
    return values
