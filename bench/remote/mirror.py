"""Sync a staged run directory with its `s3://` copy (boto3; the `[s3]` extra).

Each process keeps `known`: the MD5 of every object it has seen on the remote (read
by a pull, or written by a push). A push uploads a file only when its bytes differ from
both `known` and the remote's current ETag, so a process never re-uploads a file it did
not change — a driver on another node than its Ray tasks cannot overwrite their newer
records with its stale copies — and never uploads a file twice.

Objects are written with one `PutObject` each, which S3 makes atomic per object (a
reader sees the old or the new bytes, never a mix). A unit (conversation) is pushed
once it has finished, in an order that makes its commit points land last: store files
first, each store's `checkpoint.json` after its data, then the question records. A
crash mid-push leaves an older checkpoint beside newer data, which the stores' own
checks rebuild from zero (as for a local kill), and no record that outruns its store.

Credentials come only from the environment (boto3's chain: `AWS_ACCESS_KEY_ID`,
`AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, profiles, instance roles); the endpoint
from `s3.endpoint_url` or `AWS_ENDPOINT_URL`. Nothing here writes them anywhere.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.errors import BenchError, ConfigError
from bench.paths import contained
from bench.remote.uri import S3Uri

log = logging.getLogger("bench.run")
COMMIT_FILES = ("checkpoint.json",)
"""Store files that say "this store is complete up to here": uploaded after the data."""
SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")
"""SQLite's side files: only the database file itself is synced, once it is closed."""
NEVER_SYNCED = ("run.log",)
"""Top-level files a pull leaves alone (Hydra holds `run.log` open from the start)."""


class RemoteError(BenchError):
    """The object store refused or failed a request (the message names the URI)."""


@dataclass(frozen=True)
class Scope:
    """Which run-relative paths (`questions/q.json`, `stores/rag/c1/...`) a sync touches."""

    files: frozenset[str] = frozenset()
    """Exact paths (a unit's question records)."""
    folders: tuple[str, ...] = ()
    """Folder prefixes ending in `/` (a unit's store folders); exact mirrors on pull."""
    top: bool = False
    """Also every path outside `questions/` and `stores/` (run.json, cache, summaries)."""

    def holds(self, rel: str) -> bool:
        """True when the path belongs to this scope (lock and temp files never do)."""
        name = rel.rsplit("/", 1)[-1]
        if name.startswith(".lock") or (name.startswith(".") and name.endswith(".tmp")):
            return False
        if name.endswith(SQLITE_SIDE_FILES):  # live state of an open database, not data
            return False
        if rel in self.files or any(rel.startswith(f) for f in self.folders):
            return True
        return self.top and not rel.startswith(("questions/", "stores/"))

    def exact(self, rel: str) -> bool:
        """True when a pull mirrors this path exactly (deletes it if the remote lacks it)."""
        return rel in self.files or any(rel.startswith(f) for f in self.folders)


def client(endpoint_url: str | None) -> Any:
    """A boto3 S3 client; the endpoint from the argument, else boto3's own (env) lookup."""
    try:
        import boto3
    except ImportError:
        raise ConfigError(
            "out=s3://...: boto3 is not installed; pip install 'armbench[s3]'"
        ) from None
    return boto3.client("s3", endpoint_url=endpoint_url or None)


class Mirror:
    """A local run folder and its remote copy; `pull` and `push` move scopes between them."""

    def __init__(self, uri: S3Uri, local: Path, endpoint_url: str | None = None) -> None:
        self.uri = uri
        self.local = local
        self.known: dict[str, str] = {}
        """Run-relative path -> MD5 hex this process knows the remote to hold."""
        self._endpoint_url = endpoint_url
        self._client: Any = None

    @property
    def s3(self) -> Any:
        """The boto3 client, made on first use."""
        if self._client is None:
            self._client = client(self._endpoint_url)
        return self._client

    def listing(self) -> dict[str, str]:
        """Every object under the prefix: run-relative path -> ETag (MD5 hex when simple)."""
        start = self.uri.key("")
        found: dict[str, str] = {}
        try:
            pages = self.s3.get_paginator("list_objects_v2").paginate(
                Bucket=self.uri.bucket, Prefix=start
            )
            for page in pages:
                for item in page.get("Contents", []):
                    found[item["Key"][len(start) :]] = str(item["ETag"]).strip('"')
        except Exception as exc:
            raise _remote_error(self.uri, "list", exc) from None
        return found

    def pull(self, scope: Scope) -> int:
        """Make the local scope equal the remote's; return how many files were downloaded.

        Paths in `scope.files`/`scope.folders` are mirrored exactly (a local file the
        remote lacks is deleted: the remote is the truth, so a unit killed before its
        push restarts from the last pushed state). Top-level files are only fetched.
        """
        remote = {rel: etag for rel, etag in self.listing().items() if scope.holds(rel)}
        fetched = 0
        for rel, etag in sorted(remote.items()):
            if rel in NEVER_SYNCED:
                continue
            path = self._path(rel)
            if not path.is_file() or _md5(path) != etag:
                self._download(rel, path)
                fetched += 1
            self.known[rel] = etag
        for rel in self._local_files(scope):
            if scope.exact(rel) and rel not in remote:
                self._path(rel).unlink()
        return fetched

    def push(self, scope: Scope) -> int:
        """Upload the scope's changed files, commit points last; return how many."""
        remote = self.listing()
        uploaded = 0
        for rel in sorted(self._local_files(scope), key=_push_order):
            digest = _md5(self._path(rel))
            if digest in (self.known.get(rel), remote.get(rel)):
                self.known[rel] = digest
                continue
            self._upload(rel, digest)
            uploaded += 1
        stale = [r for r in remote if scope.holds(r) and scope.folders and _in(r, scope.folders)]
        gone = [r for r in stale if not self._path(r).exists()]
        for rel in gone:  # a store rebuilt locally: drop the files it no longer has
            self._delete(rel)
        return uploaded

    def _local_files(self, scope: Scope) -> Iterable[str]:
        if not self.local.is_dir():
            return []
        found = []
        for dirpath, _, names in os.walk(self.local):
            for name in names:
                rel = Path(dirpath, name).relative_to(self.local).as_posix()
                if scope.holds(rel):
                    found.append(rel)
        return sorted(found)

    def _path(self, rel: str) -> Path:
        return contained(self.local / rel, self.local)

    def _download(self, rel: str, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        os.close(fd)
        try:
            self.s3.download_file(self.uri.bucket, self.uri.key(rel), tmp)
            os.replace(tmp, path)
        except Exception as exc:
            Path(tmp).unlink(missing_ok=True)
            raise _remote_error(self.uri, f"download {rel}", exc) from None

    def _upload(self, rel: str, digest: str) -> None:
        body = self._path(rel).read_bytes()
        md5_b64 = base64.b64encode(bytes.fromhex(digest)).decode()
        try:
            self.s3.put_object(
                Bucket=self.uri.bucket, Key=self.uri.key(rel), Body=body, ContentMD5=md5_b64
            )
        except Exception as exc:
            raise _remote_error(self.uri, f"upload {rel}", exc) from None
        self.known[rel] = digest

    def _delete(self, rel: str) -> None:
        try:
            self.s3.delete_object(Bucket=self.uri.bucket, Key=self.uri.key(rel))
        except Exception as exc:
            raise _remote_error(self.uri, f"delete {rel}", exc) from None
        self.known.pop(rel, None)


def _push_order(rel: str) -> tuple[int, str]:
    """Store data, then store commit points, then records, then top-level files."""
    if rel.startswith("stores/"):
        return (1 if rel.rsplit("/", 1)[-1] in COMMIT_FILES else 0, rel)
    return (2 if rel.startswith("questions/") else 3, rel)


def _in(rel: str, folders: tuple[str, ...]) -> bool:
    return any(rel.startswith(f) for f in folders)


def _md5(path: Path) -> str:
    digest = hashlib.md5(usedforsecurity=False)
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _remote_error(uri: S3Uri, what: str, exc: Exception) -> RemoteError:
    """One line naming the URI and the store's answer (never the credentials)."""
    reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return RemoteError(
        f"{uri}: {what} failed ({type(exc).__name__}: {reason}): check the bucket, "
        "AWS_ENDPOINT_URL / s3.endpoint_url and the AWS_* credentials in the environment"
    )
