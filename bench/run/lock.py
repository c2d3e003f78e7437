"""One run at a time per run directory: an OS lock on `<out>/.lock`.

`fcntl.flock` is released by the kernel when the holder exits, however it exits
(SIGKILL included), so a stale lock file never blocks a resume; the file keeps the
holder's PID only so that the refusal can name it. Readers (summarise, report,
screen) never take the lock and never write.

Shards (`shard=i/n`) write disjoint question files into one run directory, so they
share `<out>/.lock` (`LOCK_SH`: no unsharded run can start beside them) and each holds
its own `<out>/.lock-shard-<i>-of-<n>` exclusively (the same shard cannot run twice).
Since shards may run at once, every read-modify-write of `run.json` happens under
`run_json_lock` (`<out>/.lock-run-json`, exclusive, waited for), so no shard's costs or
health are lost to another's write (`bench.run.run_json.RunJson.save`).
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bench.errors import BenchError
from bench.run.scale.units import Shard

LOCK_FILE = ".lock"
RUN_JSON_LOCK_FILE = ".lock-run-json"


class RunLockedError(BenchError):
    """Another process holds the run directory's lock."""


@contextmanager
def run_lock(run_dir: Path, shard: Shard | None = None) -> Iterator[None]:
    """Hold the run directory's lock (see the module docstring for shards) for the block.

    Raises:
        RunLockedError: another live process holds it (its PID is named).
        BenchError: the folder cannot be created or the lock file cannot be opened.
    """
    if shard is None:
        with _flock(run_dir, LOCK_FILE, exclusive=True):
            yield
        return
    with (
        _flock(run_dir, LOCK_FILE, exclusive=False),
        _flock(run_dir, f"{LOCK_FILE}-shard-{shard.index}-of-{shard.count}", exclusive=True),
    ):
        yield


@contextmanager
def run_json_lock(run_dir: Path) -> Iterator[None]:
    """Hold `<run_dir>/.lock-run-json` exclusively for the block, waiting for other holders.

    Held only for the milliseconds of one read-modify-write of run.json, so waiting is
    right: a concurrent shard's save is never an error.
    """
    with _flock(run_dir, RUN_JSON_LOCK_FILE, exclusive=True, wait=True):
        yield


@contextmanager
def _flock(run_dir: Path, name: str, *, exclusive: bool, wait: bool = False) -> Iterator[None]:
    """Hold `<run_dir>/<name>` with `flock` (exclusive, or shared) for the block.

    `wait`: block until the lock is free instead of refusing (`RunLockedError`).
    """
    path = run_dir / name
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
        fd = _open_lock_file(path)
    except OSError as exc:
        raise BenchError(
            f"cannot use out={run_dir} ({exc.strerror or exc}): pass out= a writable folder"
        ) from None
    if fd is None:  # a read-only folder without a lock file: nothing here can be written
        yield
        return
    try:
        try:
            mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
            fcntl.flock(fd, mode if wait else mode | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            raise RunLockedError(
                f"run directory {run_dir} is in use by another run (PID {holder}): "
                "wait for it to finish, or pass another out=<dir>"
            ) from None
        try:
            if exclusive:  # shared holders leave the file to the exclusive ones
                os.ftruncate(fd, 0)
                os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        except OSError:
            pass  # opened read-only (a finished run in a read-only folder): lock, no PID
        yield
    finally:
        os.close(fd)  # closing releases the flock


def _open_lock_file(path: Path) -> int | None:
    """A descriptor on the lock file: read-write, else read-only, else None (read-only dir)."""
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except (PermissionError, OSError) as exc:
        if exc.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
            raise
    try:
        return os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None


_LOCK_NAME = re.compile(rf"{re.escape(LOCK_FILE)}(?:-run-json|-shard-\d+-of-\d+)?")
"""The names `run_lock` and `run_json_lock` give their files, and no other."""


def is_lock_name(name: str) -> bool:
    """Whether this module names a lock file `name` (`.lock`, `.lock-run-json`, a shard's)."""
    return _LOCK_NAME.fullmatch(name) is not None


def remove_unheld(paths: list[Path]) -> bool:
    """Remove these lock files if no process holds any of them; True when removed.

    Each is locked exclusively without waiting and unlinked while still held, so a run
    holding one (a shard beside a refused command) keeps its file and its exclusion.
    """
    fds: list[int] = []
    try:
        for path in paths:
            fds.append(os.open(path, os.O_RDWR))
            fcntl.flock(fds[-1], fcntl.LOCK_EX | fcntl.LOCK_NB)
        for path in paths:
            path.unlink()
    except OSError:  # held (BlockingIOError), gone or unreadable: leave them
        return False
    finally:
        for fd in fds:
            os.close(fd)
    return True
