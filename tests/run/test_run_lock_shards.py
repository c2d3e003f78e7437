"""Shards share a run directory; an unsharded run and a repeated shard are refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.run.lock import RunLockedError, run_lock
from bench.run.scale.units import Shard


def test_two_shards_share_the_directory(tmp_path: Path) -> None:
    with run_lock(tmp_path, Shard(0, 2)), run_lock(tmp_path, Shard(1, 2)):
        pass


def test_the_same_shard_twice_is_refused(tmp_path: Path) -> None:
    with (
        run_lock(tmp_path, Shard(0, 2)),
        pytest.raises(RunLockedError, match="PID"),
        run_lock(tmp_path, Shard(0, 2)),
    ):
        pass


def test_unsharded_run_beside_a_shard_is_refused_both_ways(tmp_path: Path) -> None:
    with run_lock(tmp_path, Shard(1, 2)), pytest.raises(RunLockedError), run_lock(tmp_path):
        pass
    with run_lock(tmp_path), pytest.raises(RunLockedError), run_lock(tmp_path, Shard(1, 2)):
        pass
