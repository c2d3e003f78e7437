"""Identical requests in flight are sent once (single-flight), whatever the cache mode.

Against the fault server with a fixed latency: the first call sends, the others wait for
its reply (or its failure), and accounting counts one HTTP request plus `coalesced` hits.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from bench.errors import ProviderError
from bench.providers.cache import ResponseCache
from tests.support.fault_clients import quick_chat
from tests.support.fault_replies import echo_chat_fn
from tests.support.fault_server import Fault, FaultServer

MESSAGES = [{"role": "user", "content": "hello"}]


def _together(fn, n: int) -> list:
    """Call `fn` from `n` threads released at the same moment; results or exceptions."""
    gate = threading.Barrier(n)

    def one(_: int):
        gate.wait()
        try:
            return fn()
        except Exception as exc:
            return exc

    with ThreadPoolExecutor(n) as pool:
        return list(pool.map(one, range(n)))


@pytest.mark.parametrize("mode", ["off", "read", "write", "readwrite"])
def test_identical_calls_in_flight_are_sent_once_in_every_cache_mode(tmp_path: Path, mode):
    cache = ResponseCache(None if mode == "off" else tmp_path / "c.sqlite", mode)
    with FaultServer(chat_fn=echo_chat_fn) as server:
        server.always(Fault.slow(0.3))
        chat = quick_chat(server.base_url, cache=cache, timeout_s=5.0)
        results = _together(lambda: chat.complete(MESSAGES), 5)
        sent = len(server.requests)
    assert sent == 1
    assert [r.text for r in results] == ["echo: hello"] * 5
    assert not any(r.cached for r in results)  # made in this run: twins read the same
    assert len({r.latency_ms for r in results}) == 1  # the one request's latency
    totals = chat._accountant.snapshot()["roles"]["answerer"]
    counted = {k: totals[k] for k in ("calls", "http_requests", "cache_hits", "coalesced")}
    assert counted == {"calls": 5, "http_requests": 1, "cache_hits": 0, "coalesced": 4}
    assert totals["completion_tokens"] == results[0].usage.completion_tokens  # counted once


def test_a_failure_reaches_every_waiter_and_is_counted_for_each():
    with FaultServer(chat_fn=echo_chat_fn) as server:
        server.always(Fault.slow(0.6))  # slower than the client's timeout: the call fails
        chat = quick_chat(server.base_url, timeout_s=0.2, max_attempts=1)
        outcomes = _together(lambda: chat.complete(MESSAGES), 4)
        sent = len(server.requests)
    assert sent == 1
    assert all(isinstance(o, ProviderError) for o in outcomes), outcomes
    totals = chat._accountant.snapshot()["roles"]["answerer"]
    assert (totals["calls"], totals["errors"], totals["http_requests"]) == (4, 4, 1)


def test_calls_that_do_not_overlap_are_each_sent_when_the_cache_is_off():
    with FaultServer(chat_fn=echo_chat_fn) as server:
        chat = quick_chat(server.base_url)
        chat.complete(MESSAGES)
        again = chat.complete(MESSAGES)
        sent = len(server.requests)
    assert sent == 2 and not again.cached  # single-flight shares, it never stores


@pytest.mark.parametrize("mode", ["off", "readwrite"])
def test_texts_being_embedded_by_another_thread_are_not_sent_again(tmp_path: Path, mode):
    from bench.config import CacheConfig, EmbedderConfig, ProviderConfig
    from bench.providers.factory import build_providers

    with FaultServer(embed_dim=256) as server:
        server.always(Fault.slow(0.3))
        cfg = ProviderConfig(
            embedder=EmbedderConfig(kind="openai", model="e", dim=256, base_url=server.base_url),
            cache=CacheConfig(mode=mode),
        )
        providers = build_providers(cfg, tmp_path, answerer=False)
        batches = [["alpha", "beta"], ["beta", "alpha", "gamma"], ["gamma", "alpha"]]
        gate = threading.Barrier(len(batches))

        def embed(texts: list[str]):
            gate.wait()
            return providers.embedder.embed(texts)

        with ThreadPoolExecutor(len(batches)) as pool:
            rows = list(pool.map(embed, batches))
        accounting = providers.accounting()["roles"]["embedder"]
        providers.close()
        sent = [t for r in server.requests for t in (r.body or {}).get("input", [])]
    assert sorted(sent) == ["alpha", "beta", "gamma"]  # each text once, whoever sent it
    by_text = {t: rows[i][j] for i, b in enumerate(batches) for j, t in enumerate(b)}
    for i, batch in enumerate(batches):
        for j, text in enumerate(batch):
            assert (rows[i][j] == by_text[text]).all()
    assert accounting["http_requests"] == len(server.requests)
