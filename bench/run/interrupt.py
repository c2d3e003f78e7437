"""Ctrl-C (SIGINT) and SIGTERM end a run within seconds, with one closing line.

Without this, SIGINT raised `KeyboardInterrupt` in the main thread and the process then
waited for every worker thread's HTTP request (up to `timeout_s`, retries included)
before exiting, and SIGTERM ended it with no word at all. Now the first signal raises
`RunInterrupted` in the main thread, so the pipeline's `finally` blocks save run.json
and close the arms; nothing waits longer than `GRACE_S` for them: a watchdog then writes
the end line and leaves the process. A second signal leaves at once.

Leaving without joining the worker threads is as safe as a kill, which a resume undoes
exactly (tests/run/test_kill_resume.py): records are written atomically (temp file, then
rename), the response cache is SQLite, and ingestion is checkpointed. The end line says
how many records (or predictions) are on disk and the command that resumes the run; the
exit status is 128 + the signal number (130 for SIGINT, 143 for SIGTERM), as shells do.
"""

from __future__ import annotations

import logging
import os
import shlex
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

from bench.providers.secrets import redact

GRACE_S = 5.0
"""Most seconds the run's own clean-up may take after the first signal."""
SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""The signals that end a run with its end line."""


class RunInterrupted(BaseException):
    """The run was asked to stop (a BaseException, so `except Exception` lets it pass)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        """The signal received."""


def end_line(out: Path, signum: int, argv: list[str]) -> str:
    """The closing line: which signal, what is on disk, how to resume."""
    counts = []
    for folder, noun in (("questions", "records"), ("predictions", "predictions")):
        if (out / folder).is_dir():
            counts.append(f"{sum(1 for _ in (out / folder).glob('*.json'))} {noun}")
    kept = ", ".join(counts) or "nothing"
    command = shlex.join(["python", "-m", "bench.run", *argv])
    return redact(
        f"interrupted by {signal.Signals(signum).name}: run {out}: {kept} on disk, every one "
        f"complete (a question cut off mid-way has none); resume with: {command}"
    )


@contextmanager
def interruptible(
    out: Path, argv: list[str] | None = None, line: Callable[[int], str] | None = None
) -> Iterator[None]:
    """Run the block so that SIGINT/SIGTERM end it within `GRACE_S` with `end_line`.

    `line(signum)`, when given, is the closing line instead (another command: e.g.
    `bench.calibrate`, whose judge threads would otherwise hold Ctrl-C off for minutes).
    Only in the main thread (signal handlers can be set nowhere else); elsewhere the
    block runs unchanged.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    args = list(sys.argv[1:] if argv is None else argv)
    received: list[int] = []

    def leave(signum: int) -> None:
        logging.shutdown()
        text = line(signum) if line is not None else end_line(out, signum, args)
        os.write(2, (redact(text) + "\n").encode())
        os._exit(128 + signum)  # worker threads may sit in an HTTP call: do not join them

    def handler(signum: int, frame: FrameType | None) -> None:
        if received:
            leave(signum)
        received.append(signum)
        watchdog = threading.Timer(GRACE_S, leave, args=(signum,))
        watchdog.daemon = True
        watchdog.start()
        raise RunInterrupted(signum)

    previous = {s: signal.signal(s, handler) for s in SIGNALS}
    try:
        yield
    except RunInterrupted as exc:
        leave(exc.signum)
    finally:
        for s, old in previous.items():
            signal.signal(s, old)
