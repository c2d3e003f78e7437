"""Run a few long calls side by side in threads, and stop them all on Ctrl-C.

The arms of one unit ingest at once (`bench.run.conversation.ingest_arms`). A serial
ingestion stops at Ctrl-C: the KeyboardInterrupt is raised inside `arm.ingest`, which
aborts its store (nothing is marked complete) and re-raises. Threads do not get the
signal, and a pool waits for its tasks, so an interrupted run would go on extracting
until every arm finished. Here, when the waiting (main) thread is interrupted, each
thread still running a call gets the same KeyboardInterrupt raised asynchronously
(CPython's `PyThreadState_SetAsyncExc`; it lands at the thread's next Python bytecode,
at the latest when a blocking HTTP call returns), so every arm aborts as in a serial run
and the interrupt then propagates from the caller.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor, wait
from typing import TypeVar

T = TypeVar("T")
POLL_S = 0.25
"""Longest the caller sleeps between two looks at the calls: see `side_by_side`."""


def side_by_side(calls: Mapping[str, Callable[[], T]], concurrency: int) -> dict[str, T]:
    """`{name: call()}` with up to `concurrency` calls at once, in the order of `calls`.

    A call's exception is raised here (after the others finished), as a loop would raise
    it; interrupting the caller interrupts every running call (module docstring). The
    interrupt may land anywhere after the first call started (under load, even before
    the last is submitted): every thread registered by then gets it and is waited for
    before the interrupt goes on, and a thread that registers later sees `stopping` and
    never starts its call. The caller waits in slices of `POLL_S`: Linux may deliver
    SIGINT to one of the calls' threads, and Python runs its handler only in the main
    thread, which an untimed wait would leave asleep until a call ended (a hang seen
    once under load: no call ended, nothing was aborted).
    """
    running: set[int] = set()
    stopping = False
    lock = threading.Condition()

    def tracked(call: Callable[[], T]) -> T:
        with lock:
            if stopping:
                raise KeyboardInterrupt
            running.add(threading.get_ident())
        try:
            return call()
        finally:
            with lock:
                running.discard(threading.get_ident())
                lock.notify_all()

    with ThreadPoolExecutor(max(1, min(concurrency, len(calls))), "side-by-side") as pool:
        try:
            futures = {name: pool.submit(tracked, call) for name, call in calls.items()}
            while wait(futures.values(), timeout=POLL_S).not_done:
                pass  # a timed wait: the interrupt is run here within POLL_S (docstring)
            return {name: future.result() for name, future in futures.items()}
        except (KeyboardInterrupt, SystemExit):
            pool.shutdown(wait=False, cancel_futures=True)  # calls not started never start
            with lock:
                stopping = True
                for ident in running:
                    _raise_in(ident, KeyboardInterrupt)
                lock.wait_for(lambda: not running)  # each call has aborted (its store too)
            raise


def _raise_in(ident: int, exc: type[BaseException]) -> None:
    """Raise `exc` in the thread `ident` at its next bytecode (CPython)."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(exc))
