"""The fault server itself: deterministic answers, seeded faults, its request log."""

from __future__ import annotations

import json

import httpx
import numpy as np
import pytest

from bench.providers.offline_answer import OfflineAnswerer
from bench.providers.offline_embed import WordLlamaEmbedder
from tests.support.fault_replies import judge_reply
from tests.support.fault_server import Fault, FaultServer, max_in_window

ANSWER_MESSAGES = [
    {"role": "system", "content": "<CONTEXT>\nAnna: I adopted a cat named Milo.\n</CONTEXT>"},
    {"role": "user", "content": "What is the name of Anna's cat?"},
]


def _post(url: str, body: dict, headers: dict | None = None) -> httpx.Response:
    return httpx.post(url, json=body, headers=headers or {}, timeout=5.0)


def test_chat_answers_exactly_what_the_offline_answerer_answers():
    with FaultServer() as server:
        reply = _post(
            f"{server.base_url}/chat/completions", {"model": "m", "messages": ANSWER_MESSAGES}
        )
    content = reply.json()["choices"][0]["message"]["content"]
    assert content == OfflineAnswerer().complete(ANSWER_MESSAGES).text


def test_embeddings_are_the_wordllama_vectors():
    with FaultServer(embed_dim=256) as server:
        reply = _post(f"{server.base_url}/embeddings", {"model": "e", "input": ["a cat", "a dog"]})
    got = np.asarray([d["embedding"] for d in reply.json()["data"]], dtype=np.float32)
    np.testing.assert_array_equal(got, WordLlamaEmbedder(dim=256).embed(["a cat", "a dog"]))


def test_update_memory_without_a_readable_exchange_gets_empty_items():
    tool = {"type": "function", "function": {"name": "update_memory", "parameters": {}}}
    with FaultServer() as server:
        body = {"model": "m", "messages": ANSWER_MESSAGES, "tools": [tool]}
        message = _post(f"{server.base_url}/chat/completions", body).json()["choices"][0]
    assert message["finish_reason"] == "tool_calls"
    call = message["message"]["tool_calls"][0]["function"]
    assert call["name"] == "update_memory" and json.loads(call["arguments"]) == {"items": []}


def test_llm_extractor_over_http_finds_the_rule_extractors_facts(tmp_path):
    from arms.neuromorphic.exchange import exchanges
    from arms.neuromorphic.extract_llm import LLMExtractor
    from arms.neuromorphic.extract_rules import RuleExtractor
    from bench.config import DatasetConfig
    from bench.loaders import load_dataset
    from tests.support.fault_clients import quick_chat

    data = DatasetConfig(name="smoke", path="datasets/fixtures/smoke_locomo.json")
    conversation = load_dataset(data).conversations[0]
    chosen = [e for e in exchanges(conversation) if RuleExtractor().extract(e, []).facts][:3]
    assert chosen
    with FaultServer() as server:
        extractor = LLMExtractor(quick_chat(server.base_url, role="extractor"))
        for exchange in chosen:
            over_http = extractor.extract(exchange, [])
            offline = RuleExtractor().extract(exchange, [])
            assert not over_http.errors
            assert [_essence(f) for f in over_http.facts] == [_essence(f) for f in offline.facts]


def _essence(fact) -> tuple:
    return (fact.entity_name, fact.fact_content, fact.memory_type, fact.valid_date)


def test_judge_prompts_get_a_strict_json_verdict():
    prompt = "Question: q\nGold answer: 7 May 2023\nModel's answer: {}\n\nGrading rule: r"
    assert json.loads(judge_reply(prompt.format("On 7 May 2023")) or "")["correct"] is True
    assert json.loads(judge_reply(prompt.format("June 2023")) or "")["correct"] is False
    assert judge_reply("What is the name of Anna's cat?") is None


def test_seeded_fault_rate_is_reproducible():
    def faults(seed: int) -> list[str | None]:
        with FaultServer(fault_rate=0.5, seed=seed, random_faults=(Fault.http(503),)) as server:
            for i in range(20):
                _post(f"{server.base_url}/chat/completions", {"messages": [], "n": i})
            return [r.fault for r in server.requests]

    first = faults(7)
    assert first == faults(7)
    assert 3 <= first.count("503") <= 17


def test_random_faults_hit_one_request_body_at_most_twice():
    with FaultServer(fault_rate=1.0, random_faults=(Fault.http(500),)) as server:
        codes = [
            _post(f"{server.base_url}/chat/completions", {"messages": ANSWER_MESSAGES}).status_code
            for _ in range(4)
        ]
    assert codes == [500, 500, 200, 200]


def test_log_records_auth_presence_never_the_key():
    with FaultServer() as server:
        url = f"{server.base_url}/chat/completions"
        _post(url, {"messages": ANSWER_MESSAGES}, {"Authorization": "Bearer sk-secret-abc"})
        _post(url, {"messages": ANSWER_MESSAGES})
        log = server.requests
    assert [r.auth_present for r in log] == [True, False]
    assert "sk-secret-abc" not in repr(log)


@pytest.mark.parametrize(
    ("fault", "status"), [(Fault.http(502), 502), (Fault.of("malformed"), 200)]
)
def test_scripted_faults_apply_in_order_then_heal(fault, status):
    with FaultServer() as server:
        server.fail_next(fault)
        url = f"{server.base_url}/chat/completions"
        first = _post(url, {"messages": ANSWER_MESSAGES})
        second = _post(url, {"messages": ANSWER_MESSAGES})
    assert first.status_code == status
    assert second.status_code == 200 and second.json()["choices"]


def test_max_in_window_counts_half_open_windows():
    assert max_in_window([0.0, 0.5, 1.0, 1.2], 1.0) == 3  # [0.5, 1.5) holds 0.5, 1.0, 1.2
    assert max_in_window([0.0, 1.0, 2.0], 1.0) == 1
    assert max_in_window([], 60.0) == 0
