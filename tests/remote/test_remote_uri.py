"""`s3://` URIs, staging folders and sync scopes: no network, no extra needed."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.errors import ConfigError
from bench.remote.mirror import Scope
from bench.remote.uri import S3Uri, parse_s3, staging_dir


def test_uri_parses_and_names_object_keys() -> None:
    uri = parse_s3("s3://bucket/runs//locomo/")
    assert uri == S3Uri("bucket", "runs/locomo")
    assert uri.key("questions/q.json") == "runs/locomo/questions/q.json"
    assert str(uri) == "s3://bucket/runs/locomo"
    assert S3Uri("bucket", "").key("run.json") == "run.json"


@pytest.mark.parametrize(
    "text", ["s3://", "s3:///x", "s3://b/../x", "s3://b/a/./c", "s3://b", "s3://b/", "s3://b//"]
)
def test_bad_uri_is_a_config_error(text: str) -> None:
    with pytest.raises(ConfigError, match="out="):
        parse_s3(text)


def test_staging_stays_inside_the_cache_and_readers_apart(tmp_path: Path) -> None:
    run = staging_dir(S3Uri("bucket", "a/..x/b"), str(tmp_path))
    parts = run.relative_to(tmp_path.resolve()).parts
    assert parts[:2] == ("bucket", "a") and parts[2].startswith("_.x-") and len(parts) == 4
    reader = staging_dir(S3Uri("bucket", "a/..x/b"), str(tmp_path), reader=True)
    assert reader.relative_to(tmp_path.resolve()).parts == ("_read", *parts)


def test_scopes_never_hold_locks_temp_files_or_sqlite_side_files() -> None:
    unit = Scope(files=frozenset({"questions/q1.json"}), folders=("stores/rag/c1/",))
    assert unit.holds("questions/q1.json") and unit.holds("stores/rag/c1/x.lance/data")
    assert not unit.holds("questions/q2.json") and not unit.holds("run.json")
    assert not unit.holds("stores/rag/c1/.x.json.abc.tmp")
    assert not unit.holds("stores/neuromorphic/c1/archive.sqlite-wal")
    top = Scope(top=True)
    assert top.holds("run.json") and top.holds("cache/responses.sqlite")
    assert not top.holds(".lock") and not top.holds(".lock-shard-0-of-2")
    assert not top.holds("questions/q1.json") and not top.holds("stores/rag/c1/a")
    assert not top.holds("cache/responses.sqlite-shm")
