"""One OpenAI-compatible deployment: its client, limiter, concurrency bound and retry policy.

Every HTTP attempt goes through `Deployment.call`: take a concurrency slot, reserve
one request and the estimated tokens in the limiter, send, then settle the
reservation with the tokens the server reported. The factory gives each distinct client
configuration its own `Deployment` (client, retry policy) but passes the same limiter
and concurrency slots to every `Deployment` on one (base URL, model), so that roles
which share a quota also share its bounds.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from bench.errors import RunStopped
from bench.providers.ratelimit import Limiter
from bench.providers.retry import RetryPolicy, call_with_retry

T = TypeVar("T")

DEFAULT_BASE_URL = "https://api.openai.com/v1"


def make_client(base_url: str, api_key: str, api_version: str | None, timeout_s: float) -> Any:
    """An `openai.OpenAI` client with SDK retries off (tenacity retries instead).

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
    )


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
    _slots: threading.BoundedSemaphore = field(init=False, repr=False)
    """The semaphore actually used: `slots`, or an own one of size `concurrency`."""

    _closed: threading.Event = field(init=False, repr=False, default_factory=threading.Event)
    """Set by `close`: every later attempt raises RunStopped (a cooperative stop)."""

    def __post_init__(self) -> None:
        self._slots = self.slots or threading.BoundedSemaphore(max(1, self.concurrency))

    def call(
        self,
        role: str,
        request: Callable[[Any], T],
        *,
        estimated_tokens: int,
        used_tokens: Callable[[T], int | None],
        counter: AttemptCounter,
    ) -> T:
        """Run `request(client)` with limiting and retries; ProviderError when it fails."""

        def attempt() -> T:
            with self._slots:
                if self._closed.is_set():  # the run stopped while this call waited
                    raise RunStopped(f"{role} at {self.base_url}: the run's providers closed")
                reservation = self.limiter.acquire(estimated_tokens)
                counter.n += 1
                actual: int | None = None
                try:
                    result = request(self.client)
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
        self.client.close()
