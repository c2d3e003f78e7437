"""One OpenAI-compatible deployment: its client, limiter, concurrency bound and retry policy.

Every HTTP attempt goes through `Deployment.call`: take a concurrency slot, reserve
one request and the estimated tokens in the limiter, send, then settle the
reservation with the tokens the server reported. The factory gives each distinct client
configuration its own `Deployment` (client, retry policy) but passes the same limiter
and concurrency slots to every `Deployment` on one (base URL, model), so that roles
which share a quota also share its bounds.
"""

from __future__ import annotations

import importlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from bench.errors import RunStopped
from bench.providers.deadline import DeadlineRunner, deadline_transport
from bench.providers.ratelimit import Limiter
from bench.providers.retry import RetryPolicy, call_with_retry

T = TypeVar("T")

DEFAULT_BASE_URL = "https://api.openai.com/v1"


def make_client(base_url: str, api_key: str, api_version: str | None, timeout_s: float) -> Any:
    """An `openai.OpenAI` client with SDK retries off (tenacity retries instead).

    Its transport holds each request to the total deadline of the attempt it belongs to
    (`bench.providers.deadline.deadline_transport`), so a trickling reply is cut off.

    Azure OpenAI's v1 API is used through the same client with base URL
    `https://<resource>.openai.azure.com/openai/v1/`; `api_version`, when set, is sent
    as the `api-version` query parameter on every request.
    """
    import openai

    query = {"api-version": api_version} if api_version else None
    return openai.OpenAI(
        base_url=base_url,
        api_key=api_key,
        max_retries=0,
        timeout=timeout_s,
        default_query=query,
        http_client=openai.DefaultHttpxClient(transport=deadline_transport(_http_module())),
    )


def _http_module() -> Any:
    """The httpx module the installed openai SDK is built on (`httpx`, or `httpx2`)."""
    import openai

    base = openai.DefaultHttpxClient.__mro__[1]  # the SDK's client subclasses `<module>.Client`
    return importlib.import_module(base.__module__.split(".")[0])


@dataclass
class AttemptCounter:
    """How many HTTP requests a call made, readable even when the call failed."""

    n: int = 0
    """HTTP requests made so far."""


@dataclass
class Deployment:
    """One client on a (base URL, model), with its limiter, concurrency bound and retries."""

    base_url: str
    """Endpoint base URL."""
    model: str
    """Model (or Azure deployment) name."""
    client: Any
    """The OpenAI SDK client for this endpoint."""
    limiter: Limiter
    """Request/token rate limiter for this deployment's quota."""
    concurrency: int
    """Most calls in flight at once (used when `slots` is None)."""
    policy: RetryPolicy
    """Retry caps and backoff."""
    slots: threading.BoundedSemaphore | None = field(default=None, repr=False)
    """Concurrency slots shared with other deployments on the same quota (own when None)."""
    timeout_s: float = 60.0
    """Total deadline of one attempt: connect, first byte and whole body (seconds)."""
    _slots: threading.BoundedSemaphore = field(init=False, repr=False)
    """The semaphore actually used: `slots`, or an own one of size `concurrency`."""

    _closed: threading.Event = field(init=False, repr=False, default_factory=threading.Event)
    """Set by `close`: every later attempt raises RunStopped (a cooperative stop)."""

    _runner: DeadlineRunner = field(init=False, repr=False)
    """Carries each attempt's transfer under its total deadline."""

    def __post_init__(self) -> None:
        self._slots = self.slots or threading.BoundedSemaphore(max(1, self.concurrency))
        self._runner = DeadlineRunner(self.model)

    def call(
        self,
        role: str,
        request: Callable[[Any], T],
        *,
        estimated_tokens: int,
        used_tokens: Callable[[T], int | None],
        counter: AttemptCounter,
    ) -> T:
        """Run `request(client)` with limiting and retries; ProviderError when it fails.

        Each attempt has one total deadline, `timeout_s` or what is left of
        `max_retry_time_s` counted from the first attempt's send, if less
        (`bench.providers.deadline`): a reply still arriving then is a timeout, retried by
        the transient rules. Waits for a slot or the limiter do not count against it.
        """
        deadline: list[float] = []

        def attempt() -> T:
            with self._slots:
                if self._closed.is_set():  # the run stopped while this call waited
                    raise RunStopped(f"{role} at {self.base_url}: the run's providers closed")
                reservation = self.limiter.acquire(estimated_tokens)
                if not deadline:
                    deadline.append(time.monotonic() + self.policy.max_retry_time_s)
                budget = min(self.timeout_s, deadline[0] - time.monotonic())
                counter.n += 1
                actual: int | None = None
                try:
                    result = self._runner.run(budget, request, self.client)
                    actual = used_tokens(result)
                    return result
                finally:
                    self.limiter.settle(reservation, actual)

        return call_with_retry(
            attempt,
            policy=self.policy,
            where=f"{role} at {self.base_url} (model {self.model})",
            on_retry_after=self.limiter.pause,
        )

    def close(self) -> None:
        """Refuse every later attempt (RunStopped), then close the HTTP connection pool."""
        self._closed.set()
        self._runner.close()
        self.client.close()
