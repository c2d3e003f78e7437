"""A trickling model server is cut off at the total deadline (issue 40, defect 8).

A server that sends its 200 reply one byte every 0.3 s never trips a per-read timeout;
before the fix, `timeout_s=5 max_retry_time_s=12` took ~75 s per call and the reply was
accepted. Now each attempt has one total deadline (connect, first byte, whole body:
`bench.providers.deadline`), the cut-off attempt is a timeout retried by the transient
rules, and the call fails once `max_retry_time_s` is spent: never accepted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench.config import CacheConfig, EmbedderConfig, EndpointConfig, ProviderConfig
from bench.errors import ProviderError
from bench.providers.factory import build_providers
from tests.support.fault_replies import echo_chat_fn
from tests.support.fault_server import Fault, FaultServer

MESSAGES = [{"role": "user", "content": "hello"}]


def _providers(base_url: str, tmp_path: Path, timeout_s: float, total_s: float) -> Any:
    endpoint = EndpointConfig(
        kind="openai",
        model="m",
        base_url=base_url,
        api_key_env=None,
        timeout_s=timeout_s,
        max_retry_time_s=total_s,
    )
    embedder = EmbedderConfig(
        kind="openai",
        model="e",
        dim=256,
        base_url=base_url,
        api_key_env=None,
        timeout_s=timeout_s,
        max_retry_time_s=total_s,
    )
    cfg = ProviderConfig(answerer=endpoint, embedder=embedder, cache=CacheConfig(mode="off"))
    return build_providers(cfg, tmp_path)


@pytest.mark.slow
def test_a_trickling_answerer_is_cut_off_and_the_call_fails(tmp_path: Path) -> None:
    with FaultServer(chat_fn=echo_chat_fn) as server:
        server.always(Fault.trickle(0.3))
        providers = _providers(server.base_url, tmp_path, timeout_s=5, total_s=12)
        try:
            with pytest.raises(ProviderError, match="timed out") as err:
                providers.answerer.complete(MESSAGES)
            total = providers.accounting()["total"]
        finally:
            providers.close()
        attempts = len(server.requests)
    assert "no complete reply within" in str(err.value)
    assert attempts >= 2  # each cut-off attempt was retried as a transient failure ...
    assert total["errors"] == 1 and total["http_requests"] == attempts  # ... and it failed


def test_a_trickling_embedder_is_cut_off_too(tmp_path: Path) -> None:
    with FaultServer(chat_fn=echo_chat_fn) as server:
        server.always(Fault.trickle(0.3))
        providers = _providers(server.base_url, tmp_path, timeout_s=0.6, total_s=1.5)
        try:
            with pytest.raises(ProviderError, match="timed out"):
                providers.embedder.embed(["a text"])
        finally:
            providers.close()
        server.always(None)
        providers = _providers(server.base_url, tmp_path, timeout_s=5, total_s=12)
        try:  # a prompt reply is accepted as before
            assert providers.answerer.complete(MESSAGES).text == "echo: hello"
        finally:
            providers.close()
