"""Retry behaviour against a real loopback server: which faults are retried, and how long."""

from __future__ import annotations

import email.utils
import logging
import socket
import time

import pytest

from bench.errors import ProviderError
from bench.providers.retry import RetryPolicy, parse_retry_after
from tests.support.fault_clients import quick_chat
from tests.support.fault_replies import echo_chat_fn
from tests.support.fault_server import Fault, FaultServer

MESSAGES = [{"role": "user", "content": "hello"}]


@pytest.fixture
def server():
    with FaultServer(chat_fn=echo_chat_fn) as srv:
        yield srv


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        (Fault.http(429), "HTTP 429"),
        (Fault.http(500), "HTTP 500"),
        (Fault.http(502), "HTTP 502"),
        (Fault.http(503), "HTTP 503"),
        (Fault.slow(0.6), "timed out"),
        (Fault.of("drop"), "connection error"),
        (Fault.of("malformed"), "malformed response"),
    ],
    ids=lambda v: v.label if isinstance(v, Fault) else "",
)
def test_transient_fault_is_retried_then_succeeds(server, caplog, fault, reason):
    chat = quick_chat(server.base_url, timeout_s=0.3)
    server.fail_next(fault)
    with caplog.at_level(logging.WARNING, logger="bench.providers"):
        result = chat.complete(MESSAGES)
    assert result.text == "echo: hello"
    assert [r.fault for r in server.requests] == [fault.label, None]
    retries = [r.getMessage() for r in caplog.records if "retrying" in r.getMessage()]
    assert len(retries) == 1
    assert reason in retries[0] and server.base_url in retries[0]


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_other_4xx_is_not_retried(server, status):
    chat = quick_chat(server.base_url)
    server.always(Fault.http(status))
    with pytest.raises(ProviderError) as err:
        chat.complete(MESSAGES)
    assert len(server.requests) == 1
    assert f"HTTP {status}" in str(err.value)
    assert server.base_url in str(err.value)


def test_permanent_5xx_stops_at_max_attempts(server):
    chat = quick_chat(server.base_url, max_attempts=3)
    server.always(Fault.http(503))
    with pytest.raises(ProviderError, match="failed after 3 attempt"):
        chat.complete(MESSAGES)
    assert len(server.requests) == 3


def test_total_retry_time_is_capped(server):
    policy = RetryPolicy(max_attempts=10, max_retry_time_s=0.5, backoff_base_s=0.01)
    chat = quick_chat(server.base_url, policy=policy)
    server.always(Fault.http(429, retry_after="2"))
    started = time.monotonic()
    with pytest.raises(ProviderError, match="HTTP 429"):
        chat.complete(MESSAGES)
    assert time.monotonic() - started < 1.0  # it did not sleep the 2 s it could not afford
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("headers", "expected_s"),
    [({"retry_after": "0.6"}, 0.6), ({"retry_after_ms": "400", "retry_after": "30"}, 0.4)],
    ids=["retry-after", "retry-after-ms"],
)
def test_server_requested_wait_is_honoured(server, headers, expected_s):
    chat = quick_chat(server.base_url)
    server.fail_next(Fault.http(429, **headers))
    chat.complete(MESSAGES)
    first, second = server.requests
    assert expected_s <= second.t - first.t < expected_s + 0.5


def test_retry_after_http_date_is_seconds_from_now():
    now = 1_700_000_000.0
    date = email.utils.formatdate(now + 7, usegmt=True)
    assert parse_retry_after({"retry-after": date}, now=now) == pytest.approx(7.0)
    assert parse_retry_after({"retry-after": "3"}) == 3.0
    assert parse_retry_after({"retry-after-ms": "250"}) == 0.25
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None


@pytest.mark.parametrize(
    ("fault", "needle"), [("empty", "finish_reason=stop"), ("length", "raise max_tokens")]
)
def test_empty_completion_raises_instead_of_scoring_nothing(server, fault, needle):
    chat = quick_chat(server.base_url)
    server.fail_next(Fault.of(fault))
    with pytest.raises(ProviderError, match="empty completion") as err:
        chat.complete(MESSAGES)
    assert needle in str(err.value)
    assert len(server.requests) == 1


def test_unreachable_base_url_fails_after_bounded_retries_naming_it():
    with socket.socket() as sock:  # reserve a port, then close it: nothing listens there
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    base_url = f"http://127.0.0.1:{port}/v1"
    chat = quick_chat(base_url, max_attempts=3)
    started = time.monotonic()
    with pytest.raises(ProviderError) as err:
        chat.complete(MESSAGES)
    message = str(err.value)
    assert base_url in message and "3 attempt" in message and "connection error" in message
    assert "\n" not in message
    assert time.monotonic() - started < 5.0
