"""Reasoning models (gpt-5, o-series) through the fault server's reasoning-model mode.

- A `reasoning: true` endpoint sends `max_completion_tokens` and `reasoning_effort`, no
  `temperature`, `max_tokens` or `stop`; its reasoning tokens are counted and priced.
- `reasoning: auto` learns it from the first 400, with one log line, also when many
  threads hit the 400 at once; every call then succeeds.
- The 400 is never retried; an ordinary endpoint's request bodies and cache keys are
  exactly what they were before reasoning models were supported.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from bench.config import CacheConfig, EndpointConfig, ProviderConfig
from bench.errors import ConfigError, ProviderError
from bench.providers.base import CallOptions, JsonSchema
from bench.providers.factory import build_providers
from bench.providers.reasoning import rejected_parameter
from bench.result_parts import usage_dict
from tests.support.fault_clients import quick_chat
from tests.support.fault_replies import echo_chat_fn
from tests.support.fault_server import FaultServer
from tests.support.reasoning_replies import rejection

MESSAGES = [{"role": "system", "content": "ctx"}, {"role": "user", "content": "When?"}]
SCHEMA = JsonSchema("verdict", {"type": "object"})
ANSWER = CallOptions(max_tokens=64, stop=("\n\n",))
THOUGHT = 40  # reasoning tokens the stub spends per reply
SWITCH_LINE = "it is a reasoning model"


@pytest.fixture
def server():
    with FaultServer(chat_fn=echo_chat_fn) as srv:
        srv.reasoning_model(THOUGHT)
        yield srv


def providers_for(server: FaultServer, tmp_path: Path, **endpoint: Any) -> Any:
    """A ProviderSet whose answerer is on the stub (cache in tmp_path), built by the factory."""
    cfg = EndpointConfig(kind="openai", model="gpt-5-stub", base_url=server.base_url, **endpoint)
    cache = CacheConfig(mode="readwrite", path=str(tmp_path / "cache.sqlite"))
    return build_providers(ProviderConfig(answerer=cfg, cache=cache), tmp_path)


def sent(server: FaultServer) -> list[dict[str, Any]]:
    """The bodies the stub received, without model and messages."""
    out = []
    for request in server.requests:
        body = dict(request.body or {})
        body.pop("model"), body.pop("messages")
        out.append(body)
    return out


def switch_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if SWITCH_LINE in r.getMessage()]


def test_a_reasoning_endpoint_sends_max_completion_tokens_and_no_sampling_parameters(
    server: FaultServer, tmp_path: Path
) -> None:
    providers = providers_for(
        server,
        tmp_path,
        reasoning="true",
        reasoning_effort="low",
        max_completion_tokens=512,
        json_schema=True,
    )
    options = CallOptions(max_tokens=64, stop=("\n\n",), json_schema=SCHEMA)
    reply = providers.answerer.complete(MESSAGES, options=options)
    providers.close()
    assert sent(server) == [
        {
            "max_completion_tokens": 512,  # not narrowed to 64: reasoning counts against it
            "reasoning_effort": "low",
            "response_format": SCHEMA.response_format(),
        }
    ]
    assert reply.text and reply.usage.reasoning_tokens == THOUGHT


def test_reasoning_true_is_sent_as_configured_yaml_booleans_included(
    server: FaultServer, tmp_path: Path
) -> None:
    providers = providers_for(server, tmp_path, reasoning="True", max_tokens=300)
    providers.answerer.complete(MESSAGES, options=ANSWER)
    providers.close()
    assert sent(server) == [{"max_completion_tokens": 300}]  # max_tokens; no effort sent
    assert [r.fault for r in server.requests] == [None]


def test_auto_detects_once_then_every_call_succeeds(
    server: FaultServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="bench.providers")
    providers = providers_for(server, tmp_path, reasoning="auto", max_completion_tokens=200)
    replies = [
        providers.answerer.complete([{"role": "user", "content": f"q{i}"}], options=ANSWER)
        for i in range(3)
    ]
    snapshot = providers.accounting()["roles"]["answerer"]
    providers.close()
    assert [r.fault for r in server.requests] == ["unsupported_parameter", None, None, None]
    assert sent(server)[0] == {"temperature": 0.0, "max_tokens": 64, "stop": ["\n\n"]}
    assert sent(server)[1:] == [{"max_completion_tokens": 200}] * 3
    assert [r.text for r in replies] == [f"echo: q{i}" for i in range(3)]
    (line,) = switch_lines(caplog)
    assert "'max_tokens'" in line and "answerer at http://127.0.0.1" in line
    # One call each, the rejected request counted with the call that made it.
    assert (snapshot["calls"], snapshot["http_requests"], snapshot["errors"]) == (3, 4, 0)


def test_auto_switches_once_when_many_threads_hit_the_400_together(
    server: FaultServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="bench.providers")
    providers = providers_for(server, tmp_path, reasoning="auto", concurrency=8)
    start = threading.Barrier(8)
    results: dict[int, str] = {}

    def ask(i: int) -> None:
        start.wait()
        results[i] = providers.answerer.complete([{"role": "user", "content": f"t{i}"}]).text

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    snapshot = providers.accounting()["roles"]["answerer"]
    providers.close()
    assert results == {i: f"echo: t{i}" for i in range(8)}
    assert (snapshot["calls"], snapshot["errors"]) == (8, 0)
    assert snapshot["http_requests"] == len(server.requests)
    assert len(switch_lines(caplog)) == 1
    accepted = [r for r in server.requests if r.fault is None]
    assert len(accepted) == 8 and all("max_completion_tokens" in (r.body or {}) for r in accepted)


def test_identical_requests_in_flight_share_the_second_ask(
    server: FaultServer, tmp_path: Path
) -> None:
    providers = providers_for(server, tmp_path, reasoning="auto", concurrency=4)
    start = threading.Barrier(4)
    texts: list[str] = []

    def ask() -> None:
        start.wait()
        texts.append(providers.answerer.complete(MESSAGES).text)

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    snapshot = providers.accounting()["roles"]["answerer"]
    providers.close()
    assert texts == ["echo: When?"] * 4
    assert sum(r.fault is None for r in server.requests) == 1  # asked again once, shared
    assert (snapshot["calls"], snapshot["http_requests"]) == (4, len(server.requests))


def test_a_rerun_of_an_auto_endpoint_reads_the_reasoning_replies_from_the_cache(
    server: FaultServer, tmp_path: Path
) -> None:
    for _ in range(2):
        providers = providers_for(server, tmp_path, reasoning="auto")
        providers.answerer.complete(MESSAGES)
        providers.answerer.complete([{"role": "user", "content": "again"}])
        providers.close()
    # Each run pays one rejected request to learn the mode; the rerun's replies are hits.
    assert [r.fault for r in server.requests] == ["unsupported_parameter", None, None] + [
        "unsupported_parameter"
    ]


def test_the_400_is_not_retried_and_says_how_to_fix_it(server: FaultServer, tmp_path: Path) -> None:
    providers = providers_for(server, tmp_path, max_attempts=6)
    with pytest.raises(ProviderError) as caught:
        providers.answerer.complete(MESSAGES)
    snapshot = providers.accounting()["roles"]["answerer"]
    providers.close()
    assert len(server.requests) == 1
    message = str(caught.value)
    assert "rejects 'max_tokens' (HTTP 400, not retried)" in message
    assert "set reasoning: true (or auto)" in message and "\n" not in message
    assert (snapshot["http_requests"], snapshot["errors"]) == (1, 1)


def test_a_reasoning_endpoint_that_sends_a_rejected_value_is_not_switched_again(
    server: FaultServer, tmp_path: Path
) -> None:
    """In reasoning mode a 400 is an ordinary failure: one request, no loop."""
    providers = providers_for(server, tmp_path, reasoning="auto", max_completion_tokens=30)
    with pytest.raises(ProviderError) as caught:  # 30 < THOUGHT: reasoning uses the cap up
        providers.answerer.complete(MESSAGES)
    providers.close()
    assert [r.fault for r in server.requests] == ["unsupported_parameter", None]
    assert "raise max_completion_tokens (hidden reasoning counts against it)" in str(caught.value)


def test_reasoning_tokens_are_counted_priced_and_recorded(
    server: FaultServer, tmp_path: Path
) -> None:
    providers = providers_for(
        server, tmp_path, reasoning="true", price_prompt_per_1k=1.0, price_completion_per_1k=8.0
    )
    reply = providers.answerer.complete(MESSAGES)
    providers.answerer.complete(MESSAGES)  # a cache hit: no tokens, no cost
    snapshot = providers.accounting()
    providers.close()
    usage = reply.usage
    assert usage.reasoning_tokens == THOUGHT and usage.completion_tokens > THOUGHT
    role = snapshot["roles"]["answerer"]
    assert role["reasoning_tokens"] == THOUGHT
    assert role["completion_tokens"] == usage.completion_tokens
    expected = usage.prompt_tokens / 1000 * 1.0 + usage.completion_tokens / 1000 * 8.0
    assert role["cost"] == pytest.approx(expected)
    assert role["cost"] > THOUGHT / 1000 * 8.0  # the hidden reasoning is paid for
    assert snapshot["total"]["reasoning_tokens"] == THOUGHT
    assert usage_dict(usage)["reasoning_tokens"] == THOUGHT


def test_an_ordinary_endpoint_sends_and_keys_exactly_what_it_did_before(tmp_path: Path) -> None:
    """Bodies and cache keys of ordinary endpoints, auto included, are unchanged.

    The keys were computed with the code before reasoning support (commit 3783c1d1);
    a changed key would orphan every cache and committed run.
    """
    base = "http://127.0.0.1:9/v1"  # never called: keys only
    for mode in ("false", "auto"):
        chat = quick_chat(base, reasoning=mode)
        schema_chat = quick_chat(base, reasoning=mode, json_schema=True)
        options = CallOptions(
            max_tokens=64, stop=("\n\n",), json_schema=JsonSchema("verdict", {"type": "object"})
        )
        tools = [{"type": "function", "function": {"name": "update_memory"}}]
        assert chat.request_key(MESSAGES, None, "v1") == (
            "7564d635b0b21cf8498c7fafdc39a7f90c38e7fea0c70f0c16c92d77b08e295d"
        )
        assert schema_chat.request_key(MESSAGES, None, "v1", options) == (
            "f307c8e5dd48f563504bc3b061b651cde955256f1d802f1c1b4e1f523f9e721c"
        )
        assert chat.request_key(MESSAGES, tools, "", CallOptions(max_tokens=300)) == (
            "6b021b21c36ce6c1d10e41bad159331dc63eb33c549e26262dbb90eed88a0ddc"
        )
    with FaultServer(chat_fn=echo_chat_fn) as ordinary:
        for mode in ("false", "auto"):
            cache = CacheConfig(mode="readwrite", path=str(tmp_path / f"{mode}.sqlite"))
            cfg = EndpointConfig(
                kind="openai",
                model="m",
                base_url=ordinary.base_url,
                reasoning=mode,
                json_schema=True,
            )
            providers = build_providers(ProviderConfig(answerer=cfg, cache=cache), tmp_path)
            reply = providers.answerer.complete(MESSAGES, options=ANSWER)
            providers.answerer.complete(MESSAGES, options=CallOptions(json_schema=SCHEMA))
            providers.close()
            assert reply.usage.reasoning_tokens == 0
            assert usage_dict(reply.usage).keys() == {"prompt_tokens", "completion_tokens"}
        bodies = sent(ordinary)
    plain = {"temperature": 0.0, "max_tokens": 64, "stop": ["\n\n"]}
    schema = {"temperature": 0.0, "max_tokens": 256, "response_format": SCHEMA.response_format()}
    assert bodies == [plain, schema, plain, schema]


def test_dry_run_bound_uses_the_reasoning_cap(tmp_path: Path) -> None:
    base = "http://127.0.0.1:9/v1"
    assert quick_chat(base).max_completion(ANSWER) == 64
    assert (
        quick_chat(base, reasoning="true", max_completion_tokens=900).max_completion(ANSWER) == 900
    )
    assert quick_chat(base, reasoning="auto").max_completion(ANSWER) == 256  # it may switch
    assert quick_chat(base, reasoning="true").max_completion(ANSWER) == 256


@pytest.mark.parametrize(
    ("setting", "value", "fragment"),
    [
        ("reasoning", "maybe", "provider.answerer.reasoning='maybe': expected one of false"),
        ("reasoning_effort", "extreme", "provider.answerer.reasoning_effort='extreme'"),
    ],
)
def test_bad_settings_are_one_line_config_errors(
    tmp_path: Path, setting: str, value: str, fragment: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        providers_for_url("http://127.0.0.1:9/v1", tmp_path, **{setting: value})
    assert fragment in str(caught.value) and "\n" not in str(caught.value)


def providers_for_url(base_url: str, tmp_path: Path, **endpoint: Any) -> Any:
    cfg = EndpointConfig(kind="openai", model="m", base_url=base_url, **endpoint)
    return build_providers(ProviderConfig(answerer=cfg, cache=CacheConfig(mode="off")), tmp_path)


def _bad_request(body: dict[str, Any]) -> openai.BadRequestError:
    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    response = httpx.Response(400, request=request, json=body)
    return openai.BadRequestError(str(body["error"]["message"]), response=response, body=body)


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"max_tokens": 64}, "max_tokens"),
        ({"temperature": 0.0}, "temperature"),
        ({"stop": ["\n\n"]}, "stop"),
        ({"top_p": 0.5}, "top_p"),
    ],
)
def test_the_rejections_of_a_reasoning_model_are_recognised(
    body: dict[str, Any], param: str
) -> None:
    error = rejection(body)
    assert error is not None
    assert rejected_parameter(_bad_request(error)) == param
    wrapped = ProviderError("answerer: failed after 1 attempt(s)")
    wrapped.__cause__ = _bad_request(error)
    assert rejected_parameter(wrapped) == param


def test_other_400s_are_not_taken_for_a_reasoning_model() -> None:
    overflow = {
        "error": {
            "message": "This model's maximum context length is 4096 tokens.",
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
    }
    effort = {
        "error": {
            "message": "Unsupported value: 'reasoning_effort' does not support "
            "'minimal' with this model.",
            "type": "invalid_request_error",
            "param": "reasoning_effort",
            "code": "unsupported_value",
        }
    }
    relayed = {
        "error": {
            "message": "Unsupported parameter: 'max_tokens' is not supported "
            "with this model. Use 'max_completion_tokens' instead.",
            "code": "invalid_request_body",
        }
    }
    assert rejected_parameter(_bad_request(overflow)) is None
    assert rejected_parameter(_bad_request(effort)) is None  # reasoning mode sends it
    assert rejected_parameter(_bad_request(relayed)) == "max_tokens"  # read from the text
    assert rejected_parameter(ValueError("x")) is None


def _modes(*overrides: str) -> dict[str, str]:
    """Each role's `reasoning` setting as composed from the project's config."""
    from tests.run.test_settings import compose_run

    cfg = compose_run(*overrides)
    p = cfg.provider
    roles = {"answerer": p.answerer.reasoning, "extractor": p.extractor.reasoning}
    return roles | {j.judge_id: str(j.endpoint.reasoning).lower() for j in cfg.judges}


@pytest.mark.parametrize("provider", ["openai", "azure"])
@pytest.mark.parametrize(
    "judge", ["llm", "mem0_locomo", "longmemeval_official", "locomo_plus_official",
              "beam_official"],
)  # fmt: skip
def test_openai_and_azure_endpoints_detect_a_reasoning_model_by_default(
    provider: str, judge: str
) -> None:
    """A gpt-5 judge (what replaces the retired gpt-4o) works without `reasoning: auto`."""
    modes = _modes(f"provider={provider}", f"judge={judge}")
    assert set(modes.values()) == {"auto"}, modes


@pytest.mark.parametrize("provider", ["offline", "llamacpp", "vllm", "ollama", "lmstudio"])
def test_other_servers_keep_reasoning_false_so_their_bodies_and_keys(provider: str) -> None:
    """Other servers keep `false` (`auto` would send and key alike: the ordinary-endpoint test)."""
    modes = _modes(f"provider={provider}", "judge=llm")
    assert {str(m).lower() for m in modes.values()} == {"false"}, modes
