"""The sliding-window limiter, on a fake clock and as seen from the server's side."""

from __future__ import annotations

import math
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench.config import CacheConfig, EmbedderConfig, EndpointConfig, JudgeConfig, ProviderConfig
from bench.providers.factory import ProviderSet
from bench.providers.ratelimit import SlidingWindowLimiter
from tests.support.fault_clients import quick_chat
from tests.support.fault_replies import echo_chat_fn
from tests.support.fault_server import Fault, FaultServer, max_in_window


class FakeClock:
    """A settable monotonic clock."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_requests_expire_one_window_after_they_end():
    clock = FakeClock()
    limiter = SlidingWindowLimiter(1, None, window_s=10.0, clock=clock)
    first = limiter.acquire(0)
    assert math.isinf(limiter.delay_for(0))  # in flight: no end time yet
    clock.now = 1.0
    limiter.settle(first, None)  # ended at t=1, counts until t=11
    assert limiter.delay_for(0) == 10.0
    clock.now = 11.0
    assert limiter.delay_for(0) == 0.0


def test_the_oldest_of_cap_requests_decides_the_wait():
    clock = FakeClock()
    limiter = SlidingWindowLimiter(2, None, window_s=10.0, clock=clock)
    limiter.settle(limiter.acquire(0), None)  # ended at t=0
    clock.now = 1.0
    second = limiter.acquire(0)
    clock.now = 3.0
    limiter.settle(second, None)  # ended at t=3
    assert limiter.delay_for(0) == 7.0  # the first leaves the window at t=10
    clock.now = 10.0
    assert limiter.delay_for(0) == 0.0


def test_token_reservation_is_reconciled_with_reported_usage():
    clock = FakeClock()
    limiter = SlidingWindowLimiter(None, 100, window_s=60.0, clock=clock)
    reservation = limiter.acquire(80)
    assert math.isinf(limiter.delay_for(30))  # 80 + 30 > 100 while the call is in flight
    limiter.settle(reservation, 10)  # the server reported 10 tokens
    assert limiter.delay_for(30) == 0.0
    assert limiter.delay_for(95) == 60.0  # 10 + 95 > 100 until the call leaves the window


def test_estimate_above_the_cap_is_clipped_instead_of_waiting_forever():
    limiter = SlidingWindowLimiter(None, 100, window_s=60.0, clock=FakeClock())
    assert limiter.delay_for(10_000) == 0.0
    assert limiter.acquire(10_000).tokens == 100


def test_pause_holds_new_requests_for_the_server_requested_time():
    clock = FakeClock()
    limiter = SlidingWindowLimiter(None, None, clock=clock)
    limiter.pause(2.5)
    assert limiter.delay_for(0) == 2.5
    clock.now = 2.5
    assert limiter.delay_for(0) == 0.0


def test_server_never_sees_more_than_the_cap_in_any_window(tmp_path: Path):
    window_s, cap, calls = 0.4, 3, 7
    with FaultServer(chat_fn=echo_chat_fn) as server:
        endpoint = EndpointConfig(
            kind="openai", model="m", base_url=server.base_url, requests_per_minute=cap
        )
        cfg = ProviderConfig(answerer=endpoint, cache=CacheConfig(mode="off"))
        providers = ProviderSet(cfg, tmp_path, window_s=window_s)
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(lambda i: providers.answerer.complete([_msg(i)]), range(calls)))
        providers.close()
        times = [r.t for r in server.requests]
    assert len(times) == calls
    assert max_in_window(times, window_s) <= cap
    span = max(times) - min(times)
    assert span >= window_s * (math.ceil(calls / cap) - 1) * 0.95  # the limiter really bound


def test_limiter_also_counts_retries(tmp_path: Path):
    limiter = SlidingWindowLimiter(2, None, window_s=0.5)
    with FaultServer(chat_fn=echo_chat_fn) as server:
        chat = quick_chat(server.base_url, limiter=limiter)
        server.fail_next(Fault.http(503), Fault.http(503), Fault.http(503))
        chat.complete([_msg(0)])
        times = [r.t for r in server.requests]
    assert len(times) == 4
    assert max_in_window(times, 0.5) <= 2


def test_concurrency_is_bounded_at_the_server():
    with FaultServer(chat_fn=echo_chat_fn) as server:
        chat = quick_chat(server.base_url, concurrency=2, timeout_s=5.0)
        server.always(Fault.slow(0.15))
        with ThreadPoolExecutor(6) as pool:
            list(pool.map(lambda i: chat.complete([_msg(i)]), range(6)))
        assert server.max_in_flight == 2


def test_judge_on_another_deployment_gets_its_own_limiter(tmp_path: Path):
    with FaultServer(chat_fn=echo_chat_fn) as server:
        answerer = EndpointConfig(kind="openai", model="a", base_url=server.base_url)
        cfg = ProviderConfig(
            answerer=answerer, embedder=EmbedderConfig(), cache=CacheConfig(mode="off")
        )
        providers = ProviderSet(cfg, tmp_path)
        same = providers.judge(JudgeConfig(judge_id="same", endpoint=answerer))
        other_ep = EndpointConfig(kind="openai", model="judge-model", base_url=server.base_url)
        other = providers.judge(JudgeConfig(judge_id="other", endpoint=other_ep))
        deployments = {id(p._deployment.limiter) for p in (providers.answerer, same, other)}  # type: ignore[attr-defined]
        providers.close()
    assert len(deployments) == 2  # answerer and `same` share one quota; `other` has its own


def _msg(i: int) -> dict[str, str]:
    return {"role": "user", "content": f"question {i}"}


def test_waiting_thread_wakes_when_an_in_flight_call_settles():
    """acquire() wakes waiting threads when an in-flight call settles."""
    limiter = SlidingWindowLimiter(1, None, window_s=0.05)
    first = limiter.acquire(0)
    got = threading.Event()
    waiter = threading.Thread(target=lambda: (limiter.acquire(0), got.set()))
    waiter.start()
    assert not got.wait(0.1)  # blocked while the first call is in flight
    limiter.settle(first, None)
    assert got.wait(1.0)  # released one window after the first call ended
    waiter.join()


def test_an_uncapped_limiter_keeps_no_reservation_however_many_calls() -> None:
    limiter = SlidingWindowLimiter(None, None)
    for _ in range(5_000):  # a run's model calls: each used to stay in the deque
        limiter.settle(limiter.acquire(100), 100)
    assert limiter.held == 0


def test_a_capped_limiter_keeps_only_the_window() -> None:
    clock = FakeClock()
    limiter = SlidingWindowLimiter(1_000, None, window_s=10.0, clock=clock)
    for call in range(5_000):  # one call a second: 10 of them in any window
        clock.now = float(call)
        limiter.settle(limiter.acquire(0), None)
    assert limiter.held <= 11
