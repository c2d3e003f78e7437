"""`s3://bucket/prefix` URIs and the local folder a remote run is staged in (stdlib only).

The staging folder is `<cache>/<bucket>/<prefix>` (readers: `<cache>/_read/...`), where
`<cache>` is `s3.cache_dir`, else `$ARMBENCH_S3_CACHE`, else `~/.cache/armbench/s3`.
Every component of the URI goes through `safe_name`, so a hostile prefix (`..`, absolute
parts) stays inside `<cache>`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from bench.errors import ConfigError
from bench.paths import contained, safe_name

SCHEME = "s3://"
CACHE_ENV = "ARMBENCH_S3_CACHE"


def is_remote(text: object) -> bool:
    """True for an `s3://` URI (the only remote scheme)."""
    return isinstance(text, str) and text.startswith(SCHEME)


@dataclass(frozen=True)
class S3Uri:
    """A bucket and a key prefix (no leading or trailing slash)."""

    bucket: str
    """The bucket name."""
    prefix: str
    """The key prefix every object of the run lies under ("" for the bucket root)."""

    def __str__(self) -> str:
        return f"{SCHEME}{self.bucket}/{self.prefix}".rstrip("/")

    def key(self, relative: str) -> str:
        """The object key of a run-relative path (`questions/q1.json`)."""
        return f"{self.prefix}/{relative}" if self.prefix else relative


def parse_s3(text: str) -> S3Uri:
    """`s3://bucket/a/b/` -> S3Uri("bucket", "a/b"); a malformed URI is a one-line error.

    The bucket root (`s3://bucket`, no prefix) is refused: a run's objects are found by
    listing its prefix, and at the root that listing is every other run in the bucket
    (issue 29: they were pulled into the staging folder and listed in MANIFEST.json).
    """
    if not is_remote(text):
        raise ConfigError(f"out={text}: not an s3:// URI")
    bucket, _, prefix = text[len(SCHEME) :].partition("/")
    parts = [p for p in prefix.split("/") if p]
    if not bucket or any(p in (".", "..") for p in parts):
        raise ConfigError(f"out={text}: expected s3://<bucket>/<prefix> without . or .. parts")
    if not parts:
        raise ConfigError(
            f"out={text}: the bucket root holds other runs too; "
            f"pass a prefix of this run's own (s3://{bucket}/<run>)"
        )
    return S3Uri(bucket, "/".join(parts))


def staging_dir(uri: S3Uri, cache_dir: str | None = None, *, reader: bool = False) -> Path:
    """The local folder `uri` is staged in on this machine (see the module docstring).

    `reader`: the copy a reader (summarise) downloads into, `<cache>/_read/<bucket>/...`
    (no bucket name starts with `_`), so reading never touches a run's staging folder.
    """
    root = Path(cache_dir or os.environ.get(CACHE_ENV) or "~/.cache/armbench/s3").expanduser()
    root = root.resolve()
    parts = [uri.bucket, *uri.prefix.split("/")] if uri.prefix else [uri.bucket]
    base = root / "_read" if reader else root
    return contained(base.joinpath(*(safe_name(p) for p in parts)), root)
