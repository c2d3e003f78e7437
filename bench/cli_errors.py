"""The CLI boundary's one line for an operating-system failure. Standard library only.

`error: <what> <where>: <fix>` (exit 2): a full disk, a read-only folder or a path
under a file is the user's to fix, so it gets the same one line as a config error,
never a traceback. Exit 1 stays reserved for "finished with arm results in error".
"""

from __future__ import annotations

import argparse
import errno
import os
import sys
from collections.abc import Callable
from typing import NoReturn

_FIXES = {
    errno.EACCES: "make it writable, or pass another out=<dir>",
    errno.EPERM: "make it writable, or pass another out=<dir>",
    errno.EROFS: "the filesystem is read-only: pass out= a writable place",
    errno.ENOSPC: "free disk space, then re-run the same command (it resumes)",
    errno.ENOTDIR: "a path component is a file: pass a folder path",
    errno.EEXIST: "a file is in the way: move it, or pass another out=<dir>",
    errno.ENAMETOOLONG: "shorten the path (out= or the data file's location)",
}


def os_error_line(exc: OSError) -> str:
    """`error: <strerror> <file>: <fix>` for an OSError that reached a CLI."""
    where = " ".join(str(f) for f in (exc.filename, exc.filename2) if f)
    fix = _FIXES.get(exc.errno or 0, "check the path and its permissions, then re-run")
    what = exc.strerror or type(exc).__name__
    return f"error: {what.lower()} {where}: {fix}".replace("  ", " ")


PIPE_CLOSED = 141
"""Exit status when the reader closed the pipe (`| head`): 128 + SIGPIPE, as a shell reports
a command that SIGPIPE ended."""


def exit_status(main: Callable[[], int]) -> int:
    """`main()`'s status; a reader that closed stdout early ends the command quietly.

    Python raises BrokenPipeError where C tools die of SIGPIPE. As its docs advise (signal,
    "Note on SIGPIPE"), stdout then points at devnull, so the interpreter's last flush
    does not raise a second time at exit.
    """
    try:
        status = main()
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return PIPE_CLOSED
    return status


def one_line_errors(command: Callable[[], int]) -> int:
    """`command()`'s status; a BenchError or OSError becomes its one `error:` line, exit 2."""
    from bench.errors import BenchError

    try:
        return command()
    except BenchError as exc:
        print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(os_error_line(exc), file=sys.stderr)
        return 2


class OneLineParser(argparse.ArgumentParser):
    """An `argparse` parser whose usage errors are one line, `error: ...: fix`, exit 2.

    argparse's own `error` prints the whole usage block first; a bad flag is one line at
    this project's command line, like every other bad input.
    """

    def error(self, message: str) -> NoReturn:
        """Print `error: <message> (<prog>): see <prog> --help` and exit 2."""
        sys.stderr.write(f"error: {message} ({self.prog}): see {self.prog} --help\n")
        raise SystemExit(2)
