"""Files in a run directory: atomic writes, and reads of regular files only.

Every file the harness writes goes through `write_text_atomic` (a temp file in the same
folder, fsynced, then renamed), so a crash leaves the old file or the new one, never a
torn one; every file it reads back from a run directory goes through `read_file_bytes`,
which refuses anything but a regular file of bounded size (issue 29: a symlink to
`/dev/zero` or a FIFO must not hang or exhaust the machine).
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from pathlib import Path
from typing import Final


def write_text_atomic(path: Path, text: str) -> None:
    """Write `text` to `path` via a temp file in the same folder and an atomic rename.

    The temp file is `.<name>.<pid>.<random>.tmp`: one a killed writer left is known by
    its PID (`orphaned_temp`).
    """
    import tempfile  # writers only: the summariser reads records without it (issue 15)

    path.parent.mkdir(parents=True, exist_ok=True)
    prefix = f".{path.name}.{os.getpid()}."
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; results are meant to be shared
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def json_text(payload: object) -> str:
    """`payload` as the harness writes JSON files: indented, UTF-8, NaN refused, newline."""
    return json.dumps(payload, ensure_ascii=False, indent=1, allow_nan=False) + "\n"


def pid_alive(pid: int) -> bool:
    """Whether a process with this PID exists (another user's counts as alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def orphaned_temp(path: Path) -> bool:
    """True for a temp file a killed `write_text_atomic` left.

    That is a regular file named `.<name>.<pid>.<random>.tmp` whose PID no process has.
    """
    parts = path.name.split(".")
    if len(parts) < 5 or parts[0] or parts[-1] != "tmp" or not _DIGITS.fullmatch(parts[-3]):
        return False
    if path.is_symlink() or not path.is_file():
        return False
    return not pid_alive(int(parts[-3]))


_DIGITS = re.compile("[0-9]{1,10}")


def remove_orphaned_temps(root: Path) -> int:
    """Delete every `orphaned_temp` under `root` (a killed command's); how many."""
    removed = 0
    for path in root.rglob(".*.tmp") if root.is_dir() else ():
        if orphaned_temp(path):
            path.unlink(missing_ok=True)
            removed += 1
    return removed


def write_json_atomic(path: Path, payload: object) -> None:
    """Atomically write `payload` as indented JSON (NaN is refused, never written)."""
    write_text_atomic(path, json_text(payload))


_READ_FLAGS: Final = (
    os.O_RDONLY
    | getattr(os, "O_BINARY", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
)
MAX_RECORD_BYTES: Final = 64 * 1024 * 1024
"""Largest file read from a run directory as one record (a record with a saved context
and repeats is a few MB; anything far bigger is not one)."""


def read_file_bytes(
    path: str, limit: int = MAX_RECORD_BYTES, *, follow_symlinks: bool = False
) -> bytes:
    """The bytes of the regular file at `path`: one `open`, `fstat`, `read` and `close`.

    Only a regular file is read: a symlink (refused by `O_NOFOLLOW`), a FIFO (opened
    without blocking, then refused), a device or a directory is an OSError saying so,
    and a file over `limit` bytes is an OSError too — a `questions/*.json` pointing at
    `/dev/zero` or a pipe must end in one line, not fill memory or hang (issue 29).

    `open(path, "rb").read()` makes twice the system calls (an `isatty` probe, a second
    `fstat` and `lseek` in `readall`, a read that finds the end) and two file objects:
    a third of the cost of reading a run's records (issue 15). A file whose size
    changed between `fstat` and `read`, or a short read, is read on to its end.
    `follow_symlinks` (a dataset the user points at) opens the link's target, which
    must still be a regular file.
    """
    flags = _READ_FLAGS & ~getattr(os, "O_NOFOLLOW", 0) if follow_symlinks else _READ_FLAGS
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OSError(errno.ELOOP, "a symbolic link, not a regular file", path) from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", path)
        size = info.st_size
        if size > limit:
            raise OSError(errno.EFBIG, f"larger than {limit} bytes", path)
        data = os.read(fd, size + 1)
        if len(data) != size:
            parts, total = [data], len(data)
            while part := os.read(fd, 1 << 16):
                parts.append(part)
                total += len(part)
                if total > limit:
                    raise OSError(errno.EFBIG, f"larger than {limit} bytes", path)
            data = b"".join(parts)
        return data
    finally:
        os.close(fd)
