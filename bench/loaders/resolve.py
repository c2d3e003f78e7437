"""Find a dataset file: explicit path, `$BENCH_DATA_DIR`, the cache, else download it.

Order (docs/interfaces.md): `dataset.path` → `$BENCH_DATA_DIR/<filename>` → the git-ignored
cache `datasets/.cache/<filename>` (override with `$BENCH_CACHE_DIR`) → the Hub file at the
pinned commit (`dataset.hf_repo`, `hf_revision`; the Hub's own cache) or a download of
`dataset.url` into the cache. The published checksum `dataset.sha256` is enforced for the
canonical file only (found under `filename` or downloaded); an explicit `dataset.path` may
be any file in the format, and its SHA-256 is only recorded. A Hub file without a pinned
`dataset.sha256` is trusted on first use (`hub_file`): its hash is recorded, not checked.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import BinaryIO

from bench.config import DatasetConfig
from bench.errors import DatasetError
from bench.paths import PROJECT_ROOT
from bench.types import HubSource

log = logging.getLogger(__name__)

SHARED_DATA = PROJECT_ROOT.parent / "shared" / "data"
"""The offline copies beside the checkout (`../shared/data/`): a canonical file is taken
from there, checksum checked, when neither `$BENCH_DATA_DIR` nor the cache has it, before
any download (machines without internet)."""

_CHUNK = 1 << 20


def sha256_file(path: Path) -> str:
    """Hex SHA-256 of a file, read in 1 MiB chunks (memoised on path, size and mtime)."""
    st = path.stat()
    return _sha256_cached(str(path.resolve()), st.st_size, st.st_mtime_ns)


@lru_cache(maxsize=32)
def _sha256_cached(path: str, size: int, mtime_ns: int) -> str:
    """The hash itself; size and mtime are part of the key so an edited file is rehashed."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def cache_dir() -> Path:
    """Where downloads go: `$BENCH_CACHE_DIR`, else `<project root>/datasets/.cache`."""
    override = os.environ.get("BENCH_CACHE_DIR")
    return Path(override) if override else PROJECT_ROOT / "datasets" / ".cache"


def resolve_data_file(cfg: DatasetConfig) -> Path:
    """The dataset file to load, downloading and verifying it when it is nowhere local."""
    return resolve_source(cfg)[0]


@dataclass(frozen=True)
class PinnedFile:
    """A file found like a dataset file but not a dataset (an upstream judge's file).

    Looked for as `filename` in `$BENCH_DATA_DIR`, the cache and `../shared/data`, else
    downloaded from `url`; every copy must have `sha256`.
    """

    name: str
    """What the file is called in messages."""
    filename: str
    """Its path under the data folders (`judges/<name>`)."""
    url: str
    """Where it is downloaded from when no local copy exists."""
    sha256: str
    """The SHA-256 every copy must have."""


Located = DatasetConfig | PinnedFile
"""What `_find_local`, `_verify` and `_fetch` read: name, filename, url, sha256."""


def resolve_pinned_file(pinned: PinnedFile) -> Path:
    """The checksummed local copy of `pinned` (found, shared, or downloaded into the cache)."""
    found, candidates = _find_local(pinned)
    return found or _fetch(pinned, looked_in=candidates)


def resolve_source(cfg: DatasetConfig) -> tuple[Path, HubSource | None]:
    """The dataset file to load, and the Hub pin when it came from the Hub (else None)."""
    from bench.loaders.hub import check_variant

    check_variant(cfg.loader, cfg.variant)
    if cfg.path:
        return _explicit_path(cfg), None
    found, candidates = _find_local(cfg)
    if found:
        return found, None
    if cfg.hf_repo:
        from bench.loaders.hub import hub_file_name

        remote = hub_file_name(cfg.loader, cfg.variant, cfg.hf_split, cfg.filename)
        local = f"set BENCH_DATA_DIR=<dir with {cfg.filename}> (or dataset.path=)"
        return hub_file(cfg, remote, local)
    return _fetch(cfg, looked_in=candidates), None


def _find_local(source: Located) -> tuple[Path | None, list[Path]]:
    """The first checksummed local copy (`$BENCH_DATA_DIR`, cache, shared) and where it looked."""
    data_dir = os.environ.get("BENCH_DATA_DIR")
    candidates = [Path(data_dir) / source.filename] if data_dir else []
    candidates.append(cache_dir() / source.filename)
    if source.sha256:  # the offline copy beside the checkout, checked like any other
        candidates.append(SHARED_DATA / source.filename)
    for candidate in candidates:
        if candidate.is_file():
            _verify(candidate, source, origin=f"found as {source.filename}")
            return candidate, candidates
    if data_dir and not Path(data_dir).is_dir():
        log.warning("BENCH_DATA_DIR=%s is not a directory; ignoring it", data_dir)
    return None, candidates


def _explicit_path(cfg: DatasetConfig) -> Path:
    """`dataset.path`, relative to the cwd or else to the project root; never checksummed."""
    assert cfg.path is not None
    given = Path(cfg.path).expanduser()
    options = [given] if given.is_absolute() else [given, PROJECT_ROOT / given]
    for option in options:
        if option.is_file():
            if option.name == cfg.filename and cfg.sha256:
                actual = sha256_file(option)
                if actual != cfg.sha256:
                    log.warning(
                        "%s: SHA-256 %s differs from the published %s; using it as given "
                        "(dataset.path is not checksummed)",
                        option,
                        actual,
                        cfg.sha256,
                    )
            return option
    raise DatasetError(
        f"dataset.path={cfg.path}: file not found (looked in {', '.join(map(str, options))}); "
        "fix the path, or unset dataset.path to use $BENCH_DATA_DIR or the download"
    )


def _verify(path: Path, cfg: Located, origin: str) -> None:
    """Raise DatasetError when a canonical file's SHA-256 differs from `dataset.sha256`."""
    if not cfg.sha256:
        return
    actual = sha256_file(path)
    if actual != cfg.sha256.lower():
        raise DatasetError(
            f"{path}: SHA-256 mismatch ({origin}): expected {cfg.sha256}, got {actual}; "
            f"delete the file to re-download it, or pass a modified copy as dataset.path=<file>"
        )


def hub_file(cfg: DatasetConfig, remote: str, local: str) -> tuple[Path, HubSource]:
    """`remote` of `dataset.hf_repo` at the pinned commit (Hub cache first), checksum on first use.

    With `dataset.sha256` set, other bytes are refused; without (none is published for
    the shipped Hub datasets), the file's SHA-256 is recorded (run.json `dataset.sha256`,
    `hf_sha256_verified: false`) and one note tells how to pin it. `local` is the fix
    naming a local copy, for the errors.
    """
    from bench.loaders.hub import fetch_pinned, require_revision

    assert cfg.hf_repo is not None
    revision = require_revision(cfg.hf_repo, cfg.hf_revision, local)
    path = fetch_pinned(cfg.hf_repo, remote, revision, local)
    origin = f"Hub {cfg.hf_repo}@{revision[:12]}"
    if cfg.sha256:
        _verify(path, cfg, origin=origin)
    else:
        digest = sha256_file(path)
        log.warning(
            "note: %s %s: SHA-256 %s not verified against a published value (none is "
            "published; recorded in run.json); pin it with dataset.sha256=%s",
            origin,
            remote,
            digest,
            digest,
        )
    return path, HubSource(cfg.hf_repo, revision, remote, sha256_verified=bool(cfg.sha256))


def _fetch(cfg: Located, looked_in: list[Path]) -> Path:
    """Download `dataset.url` into the cache (checked against `dataset.sha256` when set)."""
    target = cache_dir() / cfg.filename
    if cfg.url:
        download_url(cfg.url, target, expected_sha256=cfg.sha256)
    else:
        where = ", ".join(str(p) for p in looked_in)
        raise DatasetError(
            f"{cfg.filename}: not found (looked in {where}) and dataset '{cfg.name}' has no "
            f"download source; set BENCH_DATA_DIR=<dir with {cfg.filename}> or dataset.path=<file>"
        )
    _verify(target, cfg, origin="downloaded")
    return target


def download_url(url: str, target: Path, expected_sha256: str | None = None) -> None:
    """Fetch `url` to `target` atomically with a progress bar; check the SHA-256 if given."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            _stream(url, out, target.name)
        if expected_sha256:
            actual = sha256_file(tmp)
            if actual != expected_sha256.lower():
                raise DatasetError(
                    f"{target.name}: SHA-256 mismatch for the download from {url}: expected "
                    f"{expected_sha256}, got {actual}; retry, or fetch the file yourself and "
                    f"set BENCH_DATA_DIR=<dir with {target.name}>"
                )
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def _stream(url: str, out: BinaryIO, label: str) -> None:
    """Copy the HTTP body to `out`, showing bytes done (and the total when known)."""
    from tqdm import tqdm

    log.info("downloading %s", url)
    try:
        with urllib.request.urlopen(url, timeout=60) as resp:
            total = int(resp.headers.get("Content-Length") or 0) or None
            with tqdm(total=total, unit="B", unit_scale=True, desc=label, leave=False) as bar:
                while chunk := resp.read(_CHUNK):
                    out.write(chunk)
                    bar.update(len(chunk))
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise DatasetError(
            f"{label}: download from {url} failed ({exc}); check the network, or fetch the "
            f"file yourself and set BENCH_DATA_DIR=<dir with {label}>"
        ) from exc


__all__ = [
    "PROJECT_ROOT",
    "SHARED_DATA",
    "cache_dir",
    "download_url",
    "hub_file",
    "resolve_data_file",
    "resolve_source",
    "sha256_file",
]
