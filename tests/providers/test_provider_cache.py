"""The SQLite response cache: hits make zero HTTP requests; the key covers what matters."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from bench.config import CacheConfig, EmbedderConfig, EndpointConfig, ProviderConfig
from bench.errors import ConfigError
from bench.providers.cache import ResponseCache, cache_key
from bench.providers.factory import build_providers
from tests.support.fault_clients import quick_chat
from tests.support.fault_replies import echo_chat_fn
from tests.support.fault_server import FaultServer

MESSAGES = [{"role": "user", "content": "hello"}]


@pytest.fixture
def server():
    with FaultServer(chat_fn=echo_chat_fn, embed_dim=256) as srv:
        yield srv


def _cfg(server: FaultServer, mode: str = "readwrite", path: str | None = None) -> ProviderConfig:
    return ProviderConfig(
        answerer=EndpointConfig(kind="openai", model="m", base_url=server.base_url),
        embedder=EmbedderConfig(kind="openai", model="e", dim=256, base_url=server.base_url),
        cache=CacheConfig(mode=mode, path=path),
    )


def test_second_identical_call_makes_zero_http_requests(server, tmp_path: Path):
    providers = build_providers(_cfg(server), tmp_path)
    first = providers.answerer.complete(MESSAGES, prompt_version="p1")
    second = providers.answerer.complete(MESSAGES, prompt_version="p1")
    providers.close()
    assert len(server.requests) == 1
    assert (first.cached, second.cached) == (False, True)
    assert (second.text, second.usage, second.model) == (first.text, first.usage, first.model)
    assert (tmp_path / "cache" / "responses.sqlite").is_file()  # the default location
    totals = providers.accounting()["roles"]["answerer"]
    assert (totals["calls"], totals["http_requests"], totals["cache_hits"]) == (2, 1, 1)


def test_cache_survives_into_the_next_run(server, tmp_path: Path):
    first_run = build_providers(_cfg(server), tmp_path)
    first_run.answerer.complete(MESSAGES)
    first_run.embedder.embed(["a turn", "another turn"])
    first_run.close()
    server.clear_log()
    second_run = build_providers(_cfg(server), tmp_path)
    assert second_run.answerer.complete(MESSAGES).cached
    vectors = second_run.embedder.embed(["another turn", "a turn"])
    second_run.close()
    assert server.requests == []
    assert vectors.shape == (2, 256)


@pytest.mark.parametrize(
    "change",
    [
        {"messages": [{"role": "user", "content": "hello!"}]},
        {"prompt_version": "p2"},
        {"tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}]},
    ],
    ids=["messages", "prompt_version", "tools"],
)
def test_anything_that_changes_the_answer_changes_the_key(server, tmp_path: Path, change):
    providers = build_providers(_cfg(server), tmp_path)
    providers.answerer.complete(MESSAGES, prompt_version="p1")
    call = {"messages": MESSAGES, "prompt_version": "p1", **change}
    result = providers.answerer.complete(call.pop("messages"), **call)
    providers.close()
    assert not result.cached
    assert len(server.requests) == 2


def test_key_covers_base_url_model_and_params():
    base = {"kind": "chat", "base_url": "u", "model": "m", "params": {"temperature": 0.0}}
    keys = {
        cache_key(**base),
        cache_key(**{**base, "base_url": "v"}),
        cache_key(**{**base, "model": "n"}),
        cache_key(**{**base, "params": {"temperature": 0.5}}),
    }
    assert len(keys) == 4
    assert cache_key(a=1, b=2) == cache_key(b=2, a=1)  # canonical, order-free


@pytest.mark.parametrize(
    ("mode", "second_cached", "requests", "stored"),
    [
        ("read", False, 2, 0),
        ("write", False, 2, 1),
        ("readwrite", True, 1, 1),
        ("off", False, 2, 0),
    ],
)
def test_cache_modes(server, tmp_path: Path, mode, second_cached, requests, stored):
    cache = ResponseCache(tmp_path / "c.sqlite", mode)
    chat = quick_chat(server.base_url, cache=cache)
    chat.complete(MESSAGES)
    assert chat.complete(MESSAGES).cached is second_cached
    assert len(server.requests) == requests
    assert (tmp_path / "c.sqlite").exists() is (mode != "off")
    assert ResponseCache(tmp_path / "c.sqlite", "readwrite").count() == stored


def test_write_mode_fills_a_cache_that_readwrite_then_serves(server, tmp_path: Path):
    path = str(tmp_path / "shared.sqlite")
    writer = build_providers(_cfg(server, "write", path), tmp_path / "a")
    writer.answerer.complete(MESSAGES)
    writer.close()
    reader = build_providers(_cfg(server, "readwrite", path), tmp_path / "b")
    assert reader.answerer.complete(MESSAGES).cached
    reader.close()
    assert len(server.requests) == 1


def test_embedding_batch_only_sends_the_texts_not_cached(server, tmp_path: Path):
    providers = build_providers(_cfg(server), tmp_path)
    first = providers.embedder.embed(["alpha", "beta"])
    mixed = providers.embedder.embed(["beta", "gamma", "", "alpha"])
    providers.close()
    assert len(server.requests) == 2
    np.testing.assert_array_equal(mixed[0], first[1])
    np.testing.assert_array_equal(mixed[3], first[0])
    assert not mixed[2].any()  # empty text: zero row, never sent
    np.testing.assert_allclose(np.linalg.norm(mixed[[0, 1, 3]], axis=1), 1.0, atol=1e-5)


def test_cache_is_safe_under_threads(server, tmp_path: Path):
    providers = build_providers(_cfg(server), tmp_path)
    prompts = [[{"role": "user", "content": f"q{i % 5}"}] for i in range(40)]
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(providers.answerer.complete, prompts))
    providers.close()
    assert [r.text for r in results] == [f"echo: q{i % 5}" for i in range(40)]
    assert ResponseCache(tmp_path / "cache" / "responses.sqlite", "read").count() == 5


def test_errors_are_never_cached(server, tmp_path: Path):
    from bench.errors import ProviderError
    from tests.support.fault_server import Fault

    providers = build_providers(_cfg(server), tmp_path)
    server.fail_next(Fault.http(400))
    with pytest.raises(ProviderError):
        providers.answerer.complete(MESSAGES)
    assert not providers.answerer.complete(MESSAGES).cached
    providers.close()


def test_unknown_mode_is_a_config_error(tmp_path: Path):
    with pytest.raises(ConfigError, match="provider.cache.mode='sometimes'"):
        ResponseCache(tmp_path / "c.sqlite", "sometimes")


def test_identical_concurrent_calls_are_sent_once(tmp_path: Path):
    from tests.support.fault_server import Fault

    cache = ResponseCache(tmp_path / "c.sqlite", "readwrite")
    with FaultServer(chat_fn=echo_chat_fn) as slow_server:
        chat = quick_chat(slow_server.base_url, cache=cache, timeout_s=5.0)
        slow_server.always(Fault.slow(0.3))
        with ThreadPoolExecutor(6) as pool:
            results = list(pool.map(lambda _: chat.complete(MESSAGES), range(6)))
        assert len(slow_server.requests) == 1
    assert {r.text for r in results} == {"echo: hello"}
    assert not any(r.cached for r in results)  # shared in flight, not read from the cache


@pytest.mark.parametrize(("mode", "kept"), [("readwrite", 1), ("read", 2)])
def test_forget_drops_one_reply_so_the_next_run_asks_again(server, tmp_path: Path, mode, kept):
    from bench.providers.cache import forget_reply

    other = [{"role": "user", "content": "keep me"}]
    seed = build_providers(_cfg(server, "readwrite"), tmp_path)
    seed.answerer.complete(MESSAGES, prompt_version="p1")
    seed.answerer.complete(other, prompt_version="p1")
    seed.close()
    providers = build_providers(_cfg(server, mode), tmp_path)
    assert not forget_reply(object(), MESSAGES, prompt_version="p1")  # keeps no cache: no-op
    assert forget_reply(providers.answerer, MESSAGES, prompt_version="p2")  # another key
    assert providers.answerer.complete(MESSAGES, prompt_version="p1").cached
    assert forget_reply(providers.answerer, MESSAGES, prompt_version="p1")
    providers.close()
    # `read` never changes the cache; the others delete exactly the forgotten request
    assert ResponseCache(tmp_path / "cache" / "responses.sqlite", "read").count() == kept
    server.clear_log()
    again = build_providers(_cfg(server, "readwrite"), tmp_path)
    assert again.answerer.complete(other, prompt_version="p1").cached
    assert again.answerer.complete(MESSAGES, prompt_version="p1").cached is (mode == "read")
    again.close()
    assert len(server.requests) == (0 if mode == "read" else 1)


def test_cached_reply_records_its_original_latency(server, tmp_path: Path):
    from tests.support.fault_server import Fault

    server.fail_next(Fault.slow(0.3))  # the first (real) request takes >= 300 ms
    providers = build_providers(_cfg(server), tmp_path)
    first = providers.answerer.complete(MESSAGES, prompt_version="p1")
    second = providers.answerer.complete(MESSAGES, prompt_version="p1")
    providers.close()
    assert first.latency_ms is not None and first.latency_ms >= 300
    assert second.cached and second.latency_ms == first.latency_ms
