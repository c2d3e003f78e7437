"""Which failures are retried, how long to wait, and the tenacity loop that does it.

Retried: HTTP 429 and 5xx, timeouts (an attempt's total deadline included: a reply
still trickling in at `timeout_s` is one, `bench.providers.deadline`), connection errors
and malformed response bodies. Never retried: any other 4xx (400, 401, 403, 404, 422
...), empty completions and a context overflow, whatever its status (llama.cpp
answers 400, or 500 when slots sharing one KV cache run out; vLLM and OpenAI 400):
the same request fails the same way.
A reasoning model's 400 to `max_tokens` or `temperature` says so, with the setting
that fixes it (`bench.providers.reasoning`).
The wait honours `retry-after-ms` and `Retry-After` (seconds or an HTTP
date) when the server sends them, otherwise exponential backoff with full jitter.
Attempts and total time per call are capped; each retry is logged with its reason.
"""

from __future__ import annotations

import email.utils
import json
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

import tenacity

from bench.errors import PermanentProviderError, ProviderError
from bench.providers.deadline import CallTimeout
from bench.providers.reasoning import rejected_parameter
from bench.providers.secrets import redact

log = logging.getLogger("bench.providers")
T = TypeVar("T")


class MalformedResponse(Exception):
    """The server answered 200 with a body that is not a usable completion."""


class EmptyCompletion(Exception):
    """The server answered with no text and no tool call."""


@dataclass(frozen=True)
class Failure:
    """A classified failure: is it worth retrying, why, and the server's requested wait."""

    retryable: bool
    """True for timeouts, connection errors, HTTP 429/5xx and malformed responses."""
    reason: str
    """One-line description of the failure."""
    retry_after_s: float | None = None
    """Wait the server asked for (Retry-After), seconds; None when it asked none."""
    permanent: bool = False
    """True when every call of the role would fail alike (401, 403, 404, a rejected
    parameter): the run stops (`bench.errors.PermanentError`) instead of recording it."""


@dataclass(frozen=True)
class RetryPolicy:
    """Caps and backoff shape for one deployment."""

    max_attempts: int = 6
    """Most tries per call, the first included."""
    max_retry_time_s: float = 300.0
    """Most seconds spent retrying one call."""
    backoff_base_s: float = 0.5
    """Multiplier of the exponential backoff, seconds."""
    backoff_max_s: float = 30.0
    """Cap on one backoff wait, seconds."""
    retry_after_max_s: float = 120.0
    """Cap on a server-requested Retry-After wait, seconds."""


def retry_budget_problem(
    timeout_s: float, max_attempts: int, max_retry_time_s: float
) -> str | None:
    """Why a request that timed out could never be retried under these caps, or None.

    The time cap (`tenacity.stop_before_delay`) counts from the call's start and stops
    before a wait that would end past it. A first attempt that timed out has used
    `timeout_s`, and the first backoff wait is at most `2 * backoff_base_s` (capped by
    `backoff_max_s`), so a retry needs `max_retry_time_s > timeout_s + that bound`.
    """
    policy = RetryPolicy()
    first_wait = min(policy.backoff_max_s, 2 * policy.backoff_base_s)
    if max_attempts <= 1 or max_retry_time_s > timeout_s + first_wait:
        return None
    return (
        f"max_retry_time_s={max_retry_time_s:g} leaves no time to retry a request that "
        f"timed out after timeout_s={timeout_s:g}"
    )


CONTEXT_OVERFLOW = (
    "exceeds the available context size",  # llama.cpp 400 (exceed_context_size_error)
    "exceed_context_size",
    "context size has been exceeded",  # llama.cpp, shared KV cache full
    "failed to find free space in the kv cache",
    "input prompt is too big",
    "maximum context length",  # vLLM and OpenAI 400
    "longer than the maximum model length",  # vLLM
    "context_length_exceeded",  # OpenAI error code
)
"""Lower-case fragments of the errors servers give for a prompt that does not fit."""


_PERMANENT = {
    401: "the key is rejected: export a valid key in the endpoint's api_key_env",
    403: "the key may not use this model or endpoint: use a key with access, or another model",
    404: "the server has no such model or path: fix the endpoint's model or base_url",
}
"""Statuses every call of a role would get alike, with the fix (the run stops at once)."""


def is_context_overflow(message: str) -> bool:
    """True when an error message says the request does not fit the model's context."""
    text = message.lower()
    return any(fragment in text for fragment in CONTEXT_OVERFLOW)


def classify(exc: BaseException) -> Failure:
    """Map an exception from the SDK (or our parsing) to a `Failure`."""
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return Failure(True, "request timed out")
    if isinstance(exc, CallTimeout):  # the attempt's total deadline (bench.providers.deadline)
        return Failure(True, f"request timed out: {exc}")
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc
        return Failure(True, f"connection error ({type(cause).__name__})")
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        message = _error_message(exc)
        if status >= 400 and is_context_overflow(f"{message} {exc.body}"):
            return Failure(
                False,
                f"context overflow (HTTP {status}, not retried): {message}; "
                "lower answer.max_context_tokens or set answer.truncate_to_fit=true "
                "(docs/providers.md)",
            )
        if status == 400 and (param := rejected_parameter(exc)) is not None:
            return Failure(
                False,
                f"the model rejects {param!r} (HTTP 400, not retried): "
                f"{message}; it is a reasoning model: set reasoning: true (or auto) "
                "on this endpoint (docs/providers.md)",
                permanent=True,
            )
        if status in _PERMANENT:
            return Failure(False, f"HTTP {status}: {message}; {_PERMANENT[status]}", None, True)
        reason = f"HTTP {status}: {message}"
        retryable = status == 429 or status >= 500
        headers = exc.response.headers
        return Failure(retryable, reason, parse_retry_after(headers) if retryable else None)
    if isinstance(
        exc, MalformedResponse | json.JSONDecodeError | openai.APIResponseValidationError
    ):
        return Failure(True, f"malformed response ({exc})")
    if isinstance(exc, EmptyCompletion):
        return Failure(False, str(exc))
    return Failure(False, f"{type(exc).__name__}: {exc}")


def _error_message(exc: object) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])[:200]
    return str(getattr(exc, "message", exc))[:200]


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds the server asks us to wait: `retry-after-ms`, else `Retry-After`.

    `Retry-After` may be a number of seconds or an HTTP date (RFC 9110 §10.2.3).
    """
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


class _Wait(tenacity.wait.wait_base):
    """Server-requested wait when given, else exponential backoff with full jitter."""

    def __init__(self, policy: RetryPolicy) -> None:
        self._policy = policy
        self._jitter = tenacity.wait_random_exponential(
            multiplier=policy.backoff_base_s, max=policy.backoff_max_s
        )

    def __call__(self, retry_state: tenacity.RetryCallState) -> float:
        failure = _failure_of(retry_state)
        if failure is not None and failure.retry_after_s is not None:
            return min(failure.retry_after_s, self._policy.retry_after_max_s)
        return float(self._jitter(retry_state))


def _failure_of(retry_state: tenacity.RetryCallState) -> Failure | None:
    outcome = retry_state.outcome
    if outcome is None or not outcome.failed:
        return None
    exc = outcome.exception()
    if not isinstance(exc, Exception):  # an interrupt or RunStopped: never retried
        return None
    return classify(exc)


def call_with_retry(
    attempt: Callable[[], T],
    *,
    policy: RetryPolicy,
    where: str,
    on_retry_after: Callable[[float], None] | None = None,
) -> T:
    """Run `attempt` until it succeeds, a failure is permanent, or a cap is hit.

    `where` names the role and base URL in log lines and in the final ProviderError.
    `on_retry_after` is told of each server-requested pause (to pause the limiter).
    """

    def should_retry(retry_state: tenacity.RetryCallState) -> bool:
        failure = _failure_of(retry_state)
        return failure is not None and failure.retryable

    def before_sleep(retry_state: tenacity.RetryCallState) -> None:
        failure = _failure_of(retry_state)
        assert failure is not None
        wait = retry_state.upcoming_sleep
        if failure.retry_after_s is not None and on_retry_after is not None:
            on_retry_after(wait)
        log.warning(
            "%s: attempt %d/%d failed: %s; retrying in %.2fs",
            where,
            retry_state.attempt_number,
            policy.max_attempts,
            redact(failure.reason),
            wait,
        )

    retrying = tenacity.Retrying(
        stop=tenacity.stop_after_attempt(policy.max_attempts)
        | tenacity.stop_before_delay(policy.max_retry_time_s),
        wait=_Wait(policy),
        retry=should_retry,
        before_sleep=before_sleep,
        reraise=True,
    )
    try:
        return retrying(attempt)
    except Exception as exc:
        raise final_error(exc, where, retrying.statistics.get("attempt_number", 1)) from exc


def final_error(exc: Exception, where: str, attempts: int) -> ProviderError:
    """The error a call ends in: permanent (the run stops) or recorded, its reason redacted."""
    failure = classify(exc)
    if failure.permanent:  # a re-run of the same command cannot succeed: stop the run
        return PermanentProviderError(
            redact(f"{where}: {failure.reason} (re-running the same command cannot fix it)")
        )
    return ProviderError(redact(f"{where}: failed after {attempts} attempt(s): {failure.reason}"))
