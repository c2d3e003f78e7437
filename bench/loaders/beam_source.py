r"""Find a BEAM tier folder, hash it, and download it when it is nowhere local.

A tier is a folder of conversations in the upstream layout, one numbered sub-folder each:
`<n>/chat.json` and `<n>/probing_questions.json` (the upstream repository itself nests the
second as `<n>/probing_questions/probing_questions.json`; both are read). Order, as for
files (docs/interfaces.md): `dataset.path=<folder>` → `$BENCH_DATA_DIR/beam-<tier>` → the
cache `datasets/.cache/beam-<tier>` → the tier's parquet file on the Hub (`beam_hub.py`) →
a download of the pinned upstream commit into the cache.

The folder's SHA-256 (`folder_sha256`) is the SHA-256 of the text
`"<n>/chat.json\t<sha256>\n<n>/probing_questions.json\t<sha256>\n…"`, one line per file
the loader reads, under its canonical name, sorted by (n as an integer, name): extra files
(upstream's plans and pickles) do not change it, and either question-file layout gives the
same hash for the same bytes.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from bench.config import DatasetConfig
from bench.errors import DatasetError
from bench.loaders.resolve import PROJECT_ROOT, cache_dir, download_url, sha256_file


@dataclass(frozen=True)
class Tier:
    """One BEAM length tier as upstream publishes it."""

    upstream: str
    """Upstream folder under `chats/` (`100K`, `500K`, `1M`, `10M`)."""
    conversations: int
    """Conversations upstream publishes in the tier (numbered 1..n)."""
    sha256: str | None
    """Folder SHA-256 (`folder_sha256`) of the published tier; None when not pinned yet."""

    @property
    def folder(self) -> str:
        """Local folder name looked for in `$BENCH_DATA_DIR` and the cache (`beam-100k`, ...)."""
        return f"beam-{self.upstream.lower()}"


TIERS: dict[str, Tier] = {
    "128k": Tier("100K", 20, "ca5ce0c3142ac7e1ecf390a5eaaabca401c877704b9a2aff5cfee3fdc5801cf9"),
    "500k": Tier("500K", 35, None),
    "1m": Tier("1M", 35, None),
    "10m": Tier("10M", 10, None),
}
"""`dataset.tier` → the upstream tier (mohammadtavakoli78/BEAM @ the commit in the config)."""

CHAT = "chat.json"
QUESTIONS = "probing_questions.json"
_NESTED_QUESTIONS = Path("probing_questions") / QUESTIONS
SYNTHETIC_MANIFEST = "SYNTHETIC.json"
"""Written by bench/loaders/beam_synthetic.py beside a synthetic tier's conversations: the
loader then names the dataset `<name>-synthetic` and its conversations
`beam-synthetic-<tier>-<n>`, so no run of it passes for upstream BEAM."""


def is_synthetic(root: Path) -> bool:
    """Whether `root` is a synthetic tier (bench/loaders/beam_synthetic.py wrote it)."""
    return (root / SYNTHETIC_MANIFEST).is_file()


def tier_of(cfg: DatasetConfig) -> tuple[str, Tier]:
    """The configured tier (default 128k), or one DatasetError naming the known ones."""
    name = (cfg.tier or "128k").lower()
    if name not in TIERS:
        raise DatasetError(
            f"dataset.tier={cfg.tier}: unknown BEAM tier; use one of {', '.join(TIERS)}"
        )
    return name, TIERS[name]


def conversation_folders(root: Path) -> list[Path]:
    """The numbered sub-folders of `root`, in integer order (as upstream's runner lists them)."""
    return sorted(
        (p for p in root.iterdir() if p.is_dir() and p.name.isdigit()), key=lambda p: int(p.name)
    )


def questions_file(folder: Path) -> Path:
    """`<n>/probing_questions.json`, else upstream's nested `<n>/probing_questions/…` copy."""
    flat = folder / QUESTIONS
    nested = folder / _NESTED_QUESTIONS
    return nested if not flat.is_file() and nested.is_file() else flat


def folder_sha256(root: Path) -> str:
    """SHA-256 over the sorted `(canonical name, file SHA-256)` lines (module docstring)."""
    lines = []
    for folder in conversation_folders(root):
        for canonical, path in ((CHAT, folder / CHAT), (QUESTIONS, questions_file(folder))):
            if not path.is_file():
                raise DatasetError(
                    f"{path}: file not found; every conversation folder of a BEAM tier needs "
                    f"{CHAT} and {QUESTIONS}"
                )
            lines.append(f"{folder.name}/{canonical}\t{sha256_file(path)}\n")
    return hashlib.sha256("".join(lines).encode()).hexdigest()


def local_beam_folder(cfg: DatasetConfig) -> Path | None:
    """The tier folder given (`dataset.path`) or found by name (checksummed), else None."""
    _, tier = tier_of(cfg)
    if cfg.path:
        return _explicit(cfg.path)
    cached = cache_dir() / tier.folder
    for candidate in _candidates(tier):
        usable = _complete(candidate, tier) if candidate == cached else candidate.is_dir()
        if usable and conversation_folders(candidate):
            _verify(candidate, tier, f"found as {tier.folder}")
            return candidate
    return None


def resolve_beam_folder(cfg: DatasetConfig) -> Path:
    """The tier folder to load: given, found by name (checksummed), else downloaded."""
    found = local_beam_folder(cfg)
    if found is not None:
        return found
    _, tier = tier_of(cfg)
    if not cfg.url:
        where = ", ".join(map(str, _candidates(tier)))
        raise DatasetError(
            f"{tier.folder}: not found (looked in {where}) and no dataset.url; set "
            f"BENCH_DATA_DIR=<dir with {tier.folder}/> or dataset.path=<tier folder>"
        )
    target = cache_dir() / tier.folder
    download_tier(cfg.url, tier, target)
    _verify(target, tier, "downloaded")
    return target


def _candidates(tier: Tier) -> list[Path]:
    """`$BENCH_DATA_DIR/<folder>` (when set), then the cache's `<folder>`."""
    data_dir = os.environ.get("BENCH_DATA_DIR")
    return [*([Path(data_dir) / tier.folder] if data_dir else []), cache_dir() / tier.folder]


def download_tier(base_url: str, tier: Tier, target: Path) -> None:
    """Fetch every conversation of `tier` from `<base_url>/<upstream tier>/<n>/…` into `target`.

    Files land in the flat layout; each is written atomically, so an interrupted download
    resumes where it stopped (a file already present is kept).
    """
    base = base_url.rstrip("/")
    for n in range(1, tier.conversations + 1):
        remote = f"{base}/{tier.upstream}/{n}"
        for local, path in ((CHAT, CHAT), (QUESTIONS, _NESTED_QUESTIONS.as_posix())):
            dest = target / str(n) / local
            if dest.is_file():
                continue
            try:
                download_url(f"{remote}/{path}", dest)
            except DatasetError as exc:
                raise DatasetError(
                    f"{tier.folder}: download of {remote}/{path} failed ({exc.__cause__ or exc}); "
                    f"check the network, or fetch the tier yourself and set "
                    f"BENCH_DATA_DIR=<dir with {tier.folder}/> or dataset.path=<tier folder>"
                ) from exc


def _complete(root: Path, tier: Tier) -> bool:
    """True when the cache holds every file of the tier (an interrupted download does not)."""
    return all(
        (root / str(n) / name).is_file()
        for n in range(1, tier.conversations + 1)
        for name in (CHAT, QUESTIONS)
    )


def _explicit(given_path: str) -> Path:
    """`dataset.path`: a folder with numbered conversation folders, relative to cwd or root."""
    given = Path(given_path).expanduser()
    options = [given] if given.is_absolute() else [given, PROJECT_ROOT / given]
    for option in options:
        if option.is_dir():
            if not conversation_folders(option):
                raise DatasetError(
                    f"dataset.path={given_path}: {option} has no numbered conversation folders "
                    f"(<n>/{CHAT}, <n>/{QUESTIONS}); point it at a BEAM tier folder"
                )
            return option
    raise DatasetError(
        f"dataset.path={given_path}: folder not found (looked in {', '.join(map(str, options))}); "
        "fix the path, or unset dataset.path to use $BENCH_DATA_DIR or the download"
    )


def _verify(root: Path, tier: Tier, origin: str) -> None:
    """Refuse a canonical tier folder whose folder SHA-256 differs from the pinned one."""
    if tier.sha256 is None:
        return
    actual = folder_sha256(root)
    if actual != tier.sha256:
        raise DatasetError(
            f"{root}: folder SHA-256 mismatch ({origin}): expected {tier.sha256}, got {actual}; "
            "delete the folder to re-download it, or pass a modified copy as dataset.path=<folder>"
        )
