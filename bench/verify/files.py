"""Which files of a run directory a manifest covers: results, derived files, and refusals.

Results are every regular file outside caches, stores and logs; derived files
(`SUMMARY.md`, reports, screens, charts) are rebuilt from the results by follow-up
commands and listed apart; symlinks, FIFOs and devices are named, never read.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

MANIFEST = "MANIFEST.json"
SIGNATURE = "MANIFEST.sig"
_SKIP_DIRS = frozenset({"cache", "stores", ".hydra"})
_SKIP_FILES = frozenset({MANIFEST, SIGNATURE})
DERIVED_FILES = frozenset(
    {"SUMMARY.md", "comparable.json", "dry_run.json", "report.html", "explorer.html"}
)
"""Top-level files rebuilt from the results by follow-up commands (never results)."""
DERIVED_DIRS = frozenset({"screens", "charts"})
"""Top-level folders written by follow-up commands (`bench.screen`, `bench.report`)."""


def sha256_of(path: Path) -> str:
    """SHA-256 (hex) of a file, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def is_derived(rel: str) -> bool:
    """True for a path (POSIX, relative to the run) that follow-up commands rebuild."""
    top, _, rest = rel.partition("/")
    if rest:
        return top in DERIVED_DIRS
    return top in DERIVED_FILES or top.endswith((".md", ".html"))


def result_files(run_dir: Path) -> list[Path]:
    """Every result file of a run, sorted (not derived files, caches, stores, temp files)."""
    return [p for p in listed_files(run_dir) if not is_derived(rel_path(p, run_dir))]


def derived_files(run_dir: Path) -> list[Path]:
    """Every derived file of a run (`is_derived`), sorted."""
    return [p for p in listed_files(run_dir) if is_derived(rel_path(p, run_dir))]


def rel_path(path: Path, run_dir: Path) -> str:
    """`path` relative to the run, POSIX-style (the manifest's keys)."""
    return path.relative_to(run_dir).as_posix()


def listed_files(run_dir: Path) -> list[Path]:
    """Results and derived files, sorted (skips caches, stores, logs, dot files, manifest).

    Only regular files count; `irregular_files` names what else is there.
    """
    out = []
    for path in sorted(run_dir.rglob("*")):
        rel = path.relative_to(run_dir)
        if not path.is_file() or path.is_symlink():
            continue
        if rel.parts[0] in _SKIP_DIRS or rel.name in _SKIP_FILES:
            continue
        if rel.name.startswith(".") or rel.suffix == ".log":
            continue
        out.append(path)
    return out


def irregular_files(run_dir: Path) -> list[str]:
    """Symlinks, FIFOs, sockets and devices in a run's result folders (POSIX paths).

    Nothing in a run directory should be one: `bench.summarise` and `bench.run` refuse
    to read them (`bench.files.read_file_bytes`), and verify reports each instead of
    skipping it, so a symlinked record can never be counted by one command and missed
    by another. Symlinked folders are reported, not followed.
    """
    found = []
    for root, dirs, files in os.walk(run_dir):
        base = Path(root)
        for name in sorted(dirs + files):
            path = base / name
            rel = path.relative_to(run_dir)
            if rel.parts[0] in _SKIP_DIRS:
                continue
            if path.is_symlink() or not (path.is_file() or path.is_dir()):
                found.append(rel.as_posix())
    return sorted(found)
