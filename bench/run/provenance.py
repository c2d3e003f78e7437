"""Provenance for run.json and records: code revision, versions, hashes; no secrets."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from importlib import metadata
from typing import Any

from bench import __version__
from bench.paths import PROJECT_ROOT

PACKAGES = (
    "armbench",
    "hydra-core",
    "omegaconf",
    "openai",
    "tenacity",
    "lancedb",
    "pyarrow",
    "rank-bm25",
    "numpy",
    "wordllama",
    "tokenizers",
    "nltk",
)


def git_state() -> dict[str, Any]:
    """The commit of the project checkout and whether its code has uncommitted changes."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=10
        ).stdout.strip()

    try:
        commit = git("rev-parse", "HEAD") or None
        # Committed runs live in results/: rewriting them during a run is not code drift.
        dirty = bool(git("status", "--porcelain", "--untracked-files=no", "--", ".", ":!results"))
    except (OSError, subprocess.SubprocessError):
        commit, dirty = None, None
    return {"git_commit": commit, "git_dirty": dirty}


def package_versions() -> dict[str, str | None]:
    """Installed versions of the packages that shape results."""
    versions: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def provenance() -> dict[str, Any]:
    """Everything a reader needs to reproduce the run's software environment."""
    return {
        **git_state(),
        "armbench": __version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "packages": package_versions(),
    }


def secret_values(env_names: list[str]) -> list[str]:
    """The values of the named environment variables that are set (to scrub them)."""
    return [os.environ[n] for n in env_names if n and os.environ.get(n)]
