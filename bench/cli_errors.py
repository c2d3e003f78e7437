"""The CLI boundary's one line for a user's error or an operating-system failure.

Standard library only (and bench.errors, itself standard library only).

`error: <what> <where>: <fix>` (exit 2): a full disk, a read-only folder or a path
under a file is the user's to fix, so it gets the same one line as a config error,
never a traceback. Exit 1 stays reserved for "finished with arm results in error".
"""

from __future__ import annotations

import argparse
import errno
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import NoReturn

from bench.errors import BenchError

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


USER_ERRORS = (BenchError, OSError)
"""What the CLI boundary turns into one `error:` line and exit 2 (BrokenPipeError excepted)."""


def error_line(exc: Exception) -> str:
    """The one `error:` line for a BenchError (its message, whitespace folded) or an OSError."""
    if isinstance(exc, OSError):
        return os_error_line(exc)
    return f"error: {' '.join(str(exc).split())}"


def one_line_errors(command: Callable[[], int]) -> int:
    """`command()`'s status; a BenchError or OSError becomes its one `error:` line, exit 2.

    The CLI error tail of every `main()` that returns its status (a Hydra job, which returns
    nothing, uses `exit_on_errors`); tests/project/test_cli_errors.py checks that no other function
    writes its own. A reader that closed stdout is left to `exit_status`.
    """
    try:
        return command()
    except BrokenPipeError:
        raise
    except USER_ERRORS as exc:
        print(error_line(exc), file=sys.stderr)
        return 2


@contextmanager
def exit_on_errors() -> Iterator[None]:
    """`one_line_errors` for a block that returns nothing (a Hydra job): the line, exit 2."""
    try:
        yield
    except BrokenPipeError:
        raise
    except USER_ERRORS as exc:
        print(error_line(exc), file=sys.stderr)
        raise SystemExit(2) from None


class OneLineParser(argparse.ArgumentParser):
    """An `argparse` parser whose usage errors are one line, `error: ...: fix`, exit 2.

    argparse's own `error` prints the whole usage block first; a bad flag is one line at
    this project's command line, like every other bad input.
    """

    def error(self, message: str) -> NoReturn:
        """Print `error: <message> (<prog>): see <prog> --help` and exit 2."""
        sys.stderr.write(f"error: {message} ({self.prog}): see {self.prog} --help\n")
        raise SystemExit(2)
