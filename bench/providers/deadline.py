"""One total deadline per HTTP call: connect, first byte and whole body within `budget`.

The one rule for every call the harness makes to a server it does not control: model
providers (answerer, judges, extractor, embedder: `Deployment.call`) and live memory
services (`arms/http.py`). A per-read timeout never ends a reply that trickles one byte
every 0.3 s, so the limit is on the whole attempt instead:

- `DeadlineRunner.run(budget, fn)` runs the transfer in a worker thread and waits at most
  `budget` seconds for it; past that the caller gets `CallTimeout` at once (retried by
  the caller's transient rules, never accepted).
- The worker stops by itself: `deadline_transport` (an httpx transport around the real
  one) lowers every httpx timeout of the request to the time left and checks the
  deadline between body chunks, so an abandoned transfer ends within one read after
  its deadline (`check_deadline` does the same check for code that reads a stream
  itself).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, TypeVar

from bench.errors import BenchError

T = TypeVar("T")

TRANSFER_THREADS = 64
"""Worker threads that carry transfers (made as needed): more than any caller runs at
once, so a request never waits in the queue against its own deadline."""

_local = threading.local()


class CallTimeout(BenchError):
    """A call did not deliver its whole reply within its deadline."""


def time_left() -> float | None:
    """Seconds left to this thread's transfer (None outside `DeadlineRunner.run`)."""
    end: float | None = getattr(_local, "end", None)
    return None if end is None else end - time.monotonic()


def check_deadline() -> None:
    """Raise CallTimeout when this thread's transfer has run past its deadline."""
    left = time_left()
    if left is not None and left < 0:
        raise CallTimeout("reply still arriving at the deadline")


class DeadlineRunner:
    """Runs transfers in worker threads, each under one total deadline."""

    def __init__(self, name: str) -> None:
        self._pool = ThreadPoolExecutor(TRANSFER_THREADS, thread_name_prefix=f"transfer-{name}")

    def run(self, budget: float, fn: Callable[..., T], *args: Any) -> T:
        """`fn(*args)`'s result if it returns within `budget` seconds, else CallTimeout.

        An exception `fn` raises is raised here as it is.
        """
        if budget <= 0:
            raise CallTimeout("no time left for another attempt")
        end = time.monotonic() + budget
        future = self._pool.submit(_with_deadline, end, fn, args)
        try:
            return future.result(timeout=budget)
        except FutureTimeout:
            future.cancel()
            raise CallTimeout(f"no complete reply within {budget:.2f}s") from None

    def close(self) -> None:
        """Stop taking transfers (one past its deadline ends by itself)."""
        self._pool.shutdown(wait=False, cancel_futures=True)


def _with_deadline(end: float, fn: Callable[..., T], args: tuple[Any, ...]) -> T:
    _local.end = end
    try:
        return fn(*args)
    finally:
        _local.end = None


def deadline_transport(http: Any) -> Any:
    """An `http.BaseTransport` holding each request of a `DeadlineRunner` to its deadline.

    `http` is the httpx module the client library is built on (`httpx`, or `httpx2` for
    the newer openai SDKs, whose exceptions it maps to its own timeout error). Every
    timeout of a request is lowered to the time left, and the body raises
    `http.ReadTimeout` at the first chunk that arrives after the deadline. Outside a
    runner's thread requests go through unchanged.
    """

    class DeadlineStream(http.SyncByteStream):  # type: ignore[misc]
        def __init__(self, inner: Any) -> None:
            self._inner = inner

        def __iter__(self) -> Iterator[bytes]:
            for chunk in self._inner:
                left = time_left()
                if left is not None and left < 0:
                    raise http.ReadTimeout("reply still arriving at the deadline")
                yield chunk

        def close(self) -> None:
            self._inner.close()

    class DeadlineTransport(http.BaseTransport):  # type: ignore[misc]
        def __init__(self) -> None:
            self._inner = http.HTTPTransport()

        def handle_request(self, request: Any) -> Any:
            left = time_left()
            if left is None:
                return self._inner.handle_request(request)
            check_deadline()
            given = request.extensions.get("timeout") or {}
            request.extensions["timeout"] = {
                phase: max(0.001, min(left, given.get(phase) or left))
                for phase in ("connect", "read", "write", "pool")
            }
            response = self._inner.handle_request(request)
            return http.Response(
                status_code=response.status_code,
                headers=response.headers,
                stream=DeadlineStream(response.stream),
                extensions=response.extensions,
            )

        def close(self) -> None:
            self._inner.close()

    return DeadlineTransport()
