"""Bring a remote run's records down for a reader (`python -m bench.summarise s3://...`).

Imported only for `s3://` arguments, so `bench.summarise` stays standard-library only
for local folders. The copy goes to a reader's folder beside the runs' staging folders
(`<cache>/_read/<bucket>/<prefix>`, `bench.remote.uri.staging_dir`), never into a run's
own, so reading while a run on this machine is going cannot disturb it. `questions/` is
mirrored exactly and the top-level files (run.json) fetched; stores are not.
"""

from __future__ import annotations

from pathlib import Path

from bench.remote.mirror import Mirror, Scope
from bench.remote.uri import parse_s3, staging_dir

READ_SCOPE = Scope(folders=("questions/",), top=True)
"""What a reader needs: every record, run.json (and the other top-level files)."""


def fetch_run(text: str) -> Path:
    """Download `s3://...`'s records and run.json; return the local folder holding them."""
    uri = parse_s3(text)
    mirror = Mirror(uri, staging_dir(uri, reader=True))
    mirror.pull(READ_SCOPE)
    return mirror.local


def upload_written(text: str, names: list[str]) -> None:
    """Upload files a reader wrote into the local copy (`--write`: SUMMARY.md)."""
    uri = parse_s3(text)
    Mirror(uri, staging_dir(uri, reader=True)).push(Scope(files=frozenset(names)))
