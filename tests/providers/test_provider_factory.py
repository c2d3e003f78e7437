"""`build_providers`: the name table, the provider YAMLs, tools, Azure and accounting."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path

import pytest
from omegaconf import DictConfig, OmegaConf

from bench.config import (
    CacheConfig,
    EmbedderConfig,
    EndpointConfig,
    ExtractorConfig,
    JudgeConfig,
    ProviderConfig,
)
from bench.errors import ConfigError
from bench.paths import CONF_DIR
from bench.providers.base import ChatProvider, Embedder
from bench.providers.factory import build_providers
from tests.support.fault_clients import quick_chat
from tests.support.fault_replies import echo_chat_fn
from tests.support.fault_server import FaultServer

PROVIDER_FILES = sorted((CONF_DIR / "provider").glob("*.yaml"))
UPDATE_MEMORY = {
    "type": "function",
    "function": {"name": "update_memory", "parameters": {"type": "object", "properties": {}}},
}


def _composed(name: str) -> DictConfig:
    """The provider group option as Hydra composes it (its defaults list applied)."""
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", overrides=[f"provider={name}"])
    provider = cfg.provider
    assert isinstance(provider, DictConfig)
    return provider


@pytest.mark.parametrize("path", PROVIDER_FILES, ids=lambda p: p.stem)
def test_every_provider_yaml_is_exactly_a_provider_config(path: Path):
    raw = _composed(path.stem)
    schema = OmegaConf.structured(ProviderConfig)
    merged = OmegaConf.merge({"provider": schema}, {"provider": raw})  # unknown keys raise
    cfg = OmegaConf.to_object(merged.provider)
    assert isinstance(cfg, ProviderConfig)
    assert cfg.name == path.stem
    if cfg.answerer.kind == "openai":
        assert cfg.answerer.base_url and cfg.answerer.base_url.rstrip("/").endswith("/v1")
        assert cfg.answerer.temperature == 0.0
    assert cfg.cache.mode in ("off", "readwrite")
    roles = (
        ("answerer", EndpointConfig),
        ("extractor", ExtractorConfig),
        ("embedder", EmbedderConfig),
    )
    for role, schema_cls in roles:
        if raw[role].kind == "openai":  # every field is listed, so any override needs no '+'
            assert set(raw[role]) == {f.name for f in fields(schema_cls)}, role


def test_llm_providers_share_one_extractor_block():
    shared = OmegaConf.load(CONF_DIR / "provider" / "shared" / "llm_extractor.yaml")
    for path in PROVIDER_FILES:
        raw = OmegaConf.load(path)
        if raw.answerer.kind == "openai":
            assert "extractor" not in raw, path.name  # stated once, in shared/
            assert OmegaConf.to_container(_composed(path.stem).extractor) == (
                OmegaConf.to_container(shared)
            )


def test_local_server_overrides_reach_the_extractor_too():
    raw = _composed("vllm")
    merged = OmegaConf.merge(
        {"provider": OmegaConf.structured(ProviderConfig)},
        {"provider": raw},
        OmegaConf.from_dotlist(["provider.answerer.base_url=http://gpu-box:9000/v1"]),
    )
    assert merged.provider.extractor.base_url == "http://gpu-box:9000/v1"


def test_offline_set_needs_no_network_and_is_counted(tmp_path: Path):
    providers = build_providers(ProviderConfig(cache=CacheConfig(mode="readwrite")), tmp_path)
    assert providers.extractor is None
    assert isinstance(providers.answerer, ChatProvider)
    assert isinstance(providers.embedder, Embedder)
    assert providers.embedder.dim == 256
    messages = [
        {"role": "system", "content": "<CONTEXT>\nAnna: I adopted a cat named Milo.\n</CONTEXT>"},
        {"role": "user", "content": "What is the name of Anna's cat?"},
    ]
    providers.answerer.complete(messages)
    providers.embedder.embed(["x", "y"])
    roles = providers.accounting()["roles"]
    providers.close()
    assert roles["answerer"]["calls"] == 1 and roles["answerer"]["http_requests"] == 0
    assert roles["embedder"]["phase"] == "embedding"
    assert not (tmp_path / "cache").exists()  # offline calls are never cached


@pytest.mark.parametrize(
    ("cfg", "message"),
    [
        (ProviderConfig(answerer=EndpointConfig(kind="opneai")), "did you mean 'openai'"),
        (ProviderConfig(embedder=EmbedderConfig(kind="wordlama")), "did you mean 'wordllama'"),
    ],
)
def test_unknown_kind_says_did_you_mean(tmp_path: Path, cfg, message):
    with pytest.raises(ConfigError, match=message):
        build_providers(cfg, tmp_path)


def test_offline_judge_endpoint_is_a_config_error(tmp_path: Path):
    providers = build_providers(ProviderConfig(cache=CacheConfig(mode="off")), tmp_path)
    with pytest.raises(ConfigError, match="judge 'llm'"):
        providers.judge(JudgeConfig(judge_id="llm"))


def test_extractor_gets_tools_and_answerer_and_judge_send_none(tmp_path: Path):
    with FaultServer(chat_fn=echo_chat_fn) as server:
        endpoint = EndpointConfig(kind="openai", model="m", base_url=server.base_url)
        cfg = ProviderConfig(answerer=endpoint, extractor=endpoint, cache=CacheConfig("off"))
        providers = build_providers(cfg, tmp_path)
        assert providers.extractor is not None
        extracted = providers.extractor.complete(
            [{"role": "user", "content": "t"}], tools=[UPDATE_MEMORY]
        )
        providers.answerer.complete([{"role": "user", "content": "q"}])
        providers.judge(JudgeConfig(endpoint=endpoint)).complete([{"role": "user", "content": "j"}])
        providers.close()
        tools_seen = [r.tools for r in server.requests]
    assert tools_seen == [("update_memory",), (), ()]
    assert extracted.tool_calls == ({"name": "update_memory", "arguments": '{"items": []}'},)
    assert json.loads(extracted.tool_calls[0]["arguments"]) == {"items": []}


def test_azure_api_version_is_sent_as_a_query_parameter():
    with FaultServer(chat_fn=echo_chat_fn) as server:
        quick_chat(server.base_url, api_version="preview").complete(
            [{"role": "user", "content": "q"}]
        )
        (request,) = server.requests
    assert request.path == "/v1/chat/completions"
    assert request.query == "api-version=preview"


def test_accounting_totals_tokens_and_cost_per_phase(tmp_path: Path):
    with FaultServer(chat_fn=echo_chat_fn) as server:
        endpoint = EndpointConfig(
            kind="openai",
            model="m",
            base_url=server.base_url,
            price_prompt_per_1k=1.0,
            price_completion_per_1k=2.0,
        )
        providers = build_providers(ProviderConfig(answerer=endpoint), tmp_path)
        result = providers.answerer.complete([{"role": "user", "content": "x" * 400}])
        providers.answerer.complete([{"role": "user", "content": "x" * 400}])  # a hit: free
        snapshot = providers.accounting()
        providers.close()
    answering = snapshot["phases"]["answering"]
    usage = result.usage
    assert usage.prompt_tokens > 0 and usage.completion_tokens > 0
    assert answering["prompt_tokens"] == usage.prompt_tokens
    assert answering["completion_tokens"] == usage.completion_tokens
    expected = usage.prompt_tokens / 1000 * 1.0 + usage.completion_tokens / 1000 * 2.0
    assert answering["cost"] == pytest.approx(expected)
    assert (answering["calls"], answering["cache_hits"]) == (2, 1)
    assert snapshot["total"]["cost"] == pytest.approx(expected)


def test_judge_on_the_answerers_model_uses_its_own_client_but_the_shared_quota(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from bench.providers.factory import ProviderSet
    from tests.support.fault_server import max_in_window

    monkeypatch.setenv("ARMBENCH_TEST_JUDGE_KEY", "sk-judge-key-0000")
    window_s = 0.4
    with FaultServer(chat_fn=echo_chat_fn) as server:
        answerer = EndpointConfig(
            kind="openai", model="m", base_url=server.base_url, requests_per_minute=2
        )
        judge_ep = EndpointConfig(
            kind="openai",
            model="m",
            base_url=server.base_url + "/",  # the same deployment
            api_key_env="ARMBENCH_TEST_JUDGE_KEY",
            api_version="2024-10-21",
            timeout_s=7.0,
        )
        providers = ProviderSet(
            ProviderConfig(answerer=answerer, cache=CacheConfig("off")), tmp_path, window_s=window_s
        )
        judge = providers.judge(JudgeConfig(endpoint=judge_ep))
        for i in range(2):
            providers.answerer.complete([{"role": "user", "content": f"a{i}"}])
        judge.complete([{"role": "user", "content": "j"}])
        client = judge._deployment.client  # type: ignore[attr-defined]
        providers.close()
        seen = server.requests
    assert [r.query for r in seen] == ["", "", "api-version=2024-10-21"]
    assert (client.api_key, client.timeout) == ("sk-judge-key-0000", 7.0)
    times = [r.t for r in seen]
    assert max_in_window(times, window_s) <= 2  # the judge waited for the answerer's quota
    assert times[2] - times[0] >= window_s * 0.95
