"""LLM judges with a tiny fake chat provider: strict parsing, errors, rubrics, prompt hashes."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from bench.config import EndpointConfig, JudgeConfig
from bench.errors import ConfigError, ProviderError
from bench.judge.judge_prompt import fill, parse_judge_prompt
from bench.judge.judges import (
    NO_GOLD,
    REASONING_MAX_CHARS,
    REPAIR,
    VERDICT_SCHEMA,
    build_judge,
    judge_model_warning,
    needs_judgement,
    parse_verdict,
    verdict_outcome,
)
from bench.paths import PROJECT_ROOT
from bench.records import ArmResult, Judgement
from bench.types import Question
from tests.support.fake_chat import FakeChat

LOCOMO = JudgeConfig(judge_id="j1", kind="locomo", prompt="conf/prompts/judge_locomo_v2.txt")
LME = JudgeConfig(judge_id="j2", kind="longmemeval", prompt="conf/prompts/judge_longmemeval_v2.txt")


def file_hash(rel: str) -> str:
    return hashlib.sha256((PROJECT_ROOT / rel).read_text(encoding="utf-8").encode()).hexdigest()


QUESTION = Question("conv-26:0", "conv-26", "When did Caroline go?", 2, "7 May 2023")


def test_valid_verdict_records_model_hash_and_raw() -> None:
    chat = FakeChat('{"reasoning": "same date", "correct": true}')
    judge = build_judge(LOCOMO, chat)
    result = judge.judge(QUESTION, "May 7, 2023")
    assert result == Judgement(
        judge_id="j1",
        status="ok",
        verdict=True,
        model="fake-llm",
        prompt_hash=file_hash(LOCOMO.prompt),
        raw='{"reasoning": "same date", "correct": true}',
    )
    assert judge.prompt_hash == file_hash(LOCOMO.prompt)


def test_string_false_is_false_and_fenced_json_parses() -> None:
    chat = FakeChat('{"correct": "false"}', '```json\n{"correct": "True"}\n```')
    judge = build_judge(LOCOMO, chat)
    assert judge.judge(QUESTION, "June").verdict is False
    second = judge.judge(QUESTION, "7 May 2023")
    assert second.status == "ok" and second.verdict is True


@pytest.mark.parametrize(
    "reply",
    [
        "CORRECT",
        'The answer is correct. {"correct": true}',
        '{"reasoning": "no verdict"}',
        '{"correct": 1}',
        '{"correct": "maybe"}',
        '["correct", true]',
        "",
    ],
)
def test_garbage_is_unparseable_never_false(reply: str) -> None:
    chat = FakeChat(reply, reply)
    judge = build_judge(LOCOMO, chat)
    result = judge.judge(QUESTION, "7 May 2023")
    assert result.status == "unparseable" and result.attempts == 2
    assert result.verdict is None
    assert result.raw == reply
    assert result.error and "\n" not in result.error
    # the second ask shows the model its reply and asks for the JSON verdict again
    assert chat.calls[1]["messages"][-2] == {"role": "assistant", "content": reply}
    assert '"correct"' in chat.calls[1]["messages"][-1]["content"]


def test_failed_call_is_an_error_verdict() -> None:
    judge = build_judge(LOCOMO, FakeChat(ProviderError("rate limited after 6 attempts")))
    result = judge.judge(QUESTION, "x")
    assert result.status == "error" and result.verdict is None and result.raw is None
    assert "rate limited" in (result.error or "")
    assert result.prompt_hash == judge.prompt_hash


def test_parse_verdict_strictness() -> None:
    assert parse_verdict(' {"correct": false} ') is False
    with pytest.raises(ValueError):
        parse_verdict('```json\n{"correct": true}')  # unterminated fence


@pytest.mark.parametrize(
    ("reply", "verdict"),
    [
        ('{"correct": true, "reasoning": "the same day, written as', True),
        ('{ "correct" : false , "reasoning": "a different year and then it loops and loo', False),
    ],
)
def test_a_verdict_written_before_cut_off_reasoning_counts(reply: str, verdict: bool) -> None:
    """`correct` comes first: a reply cut off inside its reasoning still holds the verdict."""
    assert parse_verdict(reply) is verdict


@pytest.mark.parametrize(
    "reply",
    ['{"reasoning": "it loops", "correct": tr', '{"correct": tru', '{"correct": true'],
)
def test_a_cut_off_reply_without_a_complete_leading_verdict_is_refused(reply: str) -> None:
    with pytest.raises(ValueError):
        parse_verdict(reply)


def test_verdict_schema_puts_correct_first_and_bounds_reasoning() -> None:
    """Small models finish the verdict: `correct` first, reasoning of bounded length."""
    schema = VERDICT_SCHEMA.schema
    assert list(schema["properties"]) == ["correct", "reasoning"]
    assert schema["properties"]["reasoning"]["maxLength"] == REASONING_MAX_CHARS <= 300
    for cfg in (LOCOMO, LME):
        system = build_judge(cfg, FakeChat()).prompt.system
        assert system.index('{"correct": true, "reasoning"') < system.index("one short sentence")
    assert REPAIR.index('"correct"') < REPAIR.index('"reasoning"')


def user_message(judge_cfg: JudgeConfig, question: Question, answer: str = "a") -> str:
    chat = FakeChat('{"correct": true}')
    build_judge(judge_cfg, chat).judge(question, answer)
    assert chat.calls[0]["messages"][0]["role"] == "system"
    return str(chat.calls[0]["messages"][1]["content"])


def test_locomo_rubrics_by_category() -> None:
    temporal = user_message(LOCOMO, QUESTION)
    assert "asks about time" in temporal and "Gold answer: 7 May 2023" in temporal
    adversarial = Question("c:1", "c", "Is Oscar Melanie's pet?", 5, None, adversarial_answer="Yes")
    text = user_message(LOCOMO, adversarial)
    assert NO_GOLD in text and 'the trap answer "Yes"' in text
    single = Question("c:2", "c", "What?", 4, 2022)  # type: ignore[arg-type]  # int gold: text
    assert "Gold answer: 2022" in user_message(LOCOMO, single)


def lme(qid: str, qtype: str) -> Question:
    return Question(qid, qid, "How many days?", 0, "18", question_type=qtype, question_date="X")


def test_longmemeval_rubric_per_type_and_abs_suffix() -> None:
    assert "Off-by-one" in user_message(LME, lme("q1", "temporal-reasoning"))
    assert "updated value" in user_message(LME, lme("q2", "knowledge-update"))
    assert "personalised response" in user_message(LME, lme("q3", "single-session-preference"))
    # abstention is keyed on the _abs suffix, not on the type
    abs_text = user_message(LME, lme("q4_abs", "temporal-reasoning"))
    assert "cannot be answered" in abs_text and "Off-by-one" not in abs_text
    default = user_message(LME, lme("q5", "single-session-user"))
    assert "intermediate steps" in default and "asked on X" in default


def test_answer_text_is_not_expanded_as_a_placeholder() -> None:
    text = user_message(LOCOMO, QUESTION, answer="{{gold}} {{rubric}}")
    assert "Model's answer: {{gold}} {{rubric}}" in text
    assert fill("{{a}} {{b}}", {"a": "{{b}}"}) == "{{b}} {{b}}"


def test_prompt_resolves_from_another_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert build_judge(LME, FakeChat()).prompt_hash == file_hash(LME.prompt)


def test_bad_configuration_fails_with_one_line() -> None:
    with pytest.raises(ConfigError, match="kind=nope"):
        build_judge(JudgeConfig(kind="nope"), FakeChat())
    with pytest.raises(ConfigError, match="not found"):
        build_judge(JudgeConfig(prompt="conf/prompts/missing.txt"), FakeChat())
    with pytest.raises(ConfigError, match=r"\[rubric:adversarial\]"):
        parse_judge_prompt("[system]\ns\n[user]\nu\n[rubric:default]\nd\n", "p", ("adversarial",))
    with pytest.raises(ConfigError, match=r"\[user\]"):
        parse_judge_prompt("# c\n[system]\ns\n[rubric:default]\nd\n", "p")


def test_needs_judgement_and_outcome() -> None:
    judge = build_judge(LOCOMO, FakeChat())
    fresh = ArmResult(status="ok", answer="x")
    assert needs_judgement(fresh, judge)
    ok = Judgement("j1", "ok", True, model=judge.model, prompt_hash=judge.prompt_hash)
    done = ArmResult(status="ok", answer="x", judgements={"j1": ok})
    assert not needs_judgement(done, judge)
    assert needs_judgement(done, judge, rejudge=True)
    assert verdict_outcome(done, "j1") is True
    stale = Judgement("j1", "ok", True, model=judge.model, prompt_hash="old")
    assert needs_judgement(ArmResult(status="ok", answer="x", judgements={"j1": stale}), judge)
    failed = ArmResult(status="ok", answer="x", judgements={"j1": Judgement("j1", "error")})
    assert needs_judgement(failed, judge)
    assert verdict_outcome(failed, "j1") is None
    assert not needs_judgement(ArmResult.failed("boom"), judge)


def test_self_judging_warning() -> None:
    cfg = JudgeConfig(judge_id="j", endpoint=EndpointConfig(model="gpt-x"))
    warning = judge_model_warning(cfg, "gpt-x")
    assert warning and "gpt-x" in warning
    assert judge_model_warning(cfg, "other") is None


class ForgetfulChat(FakeChat):
    """A FakeChat that records which requests it was asked to forget."""

    def __init__(self, *replies: str | Exception) -> None:
        super().__init__(*replies)
        self.forgotten: list[tuple[list[dict[str, Any]], str]] = []

    def forget(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        prompt_version: str = "",
        options: Any = None,
    ) -> None:
        self.forgotten.append((messages, prompt_version))


def test_only_an_unparsable_reply_is_forgotten() -> None:
    chat = ForgetfulChat("CORRECT", '{"correct": true}', ProviderError("HTTP 500"))
    judge = build_judge(LOCOMO, chat)
    verdict = judge.judge(QUESTION, "7 May")
    assert (verdict.status, verdict.verdict, verdict.attempts) == ("ok", True, 2)
    assert chat.forgotten == [(chat.calls[0]["messages"], judge.prompt.version)]
    assert judge.judge(QUESTION, "7 May").status == "error"  # a failed call caches nothing
    assert len(chat.forgotten) == 1


def test_attempts_are_configurable_and_checked() -> None:
    chat = FakeChat("no", "no", "no")
    assert build_judge(LOCOMO, chat, attempts=3).judge(QUESTION, "x").attempts == 3
    assert len(chat.calls) == 3
    with pytest.raises(ConfigError, match="judge_attempts=0"):
        build_judge(LOCOMO, FakeChat(), attempts=0)


def test_unparseable_verdict_is_kept_unless_rejudge() -> None:
    judge = build_judge(LOCOMO, FakeChat())
    bad = Judgement("j1", "unparseable", model=judge.model, prompt_hash=judge.prompt_hash)
    result = ArmResult(status="ok", answer="x", judgements={"j1": bad})
    assert not needs_judgement(result, judge)
    assert needs_judgement(result, judge, rejudge=True)
    assert verdict_outcome(result, "j1") is None


def _judge_endpoint(base_url: str) -> EndpointConfig:
    return EndpointConfig(kind="openai", model="judge-model", base_url=base_url, max_attempts=1)


def test_unparsable_cached_verdict_is_not_replayed(tmp_path: Path) -> None:
    from bench.config import CacheConfig, ProviderConfig
    from bench.providers.factory import build_providers
    from tests.support.fault_replies import deterministic_chat_fn
    from tests.support.fault_server import FaultServer

    replies = ["I think it is correct."]  # the first reply is garbage, then real verdicts

    def chat_fn(messages: list[dict[str, Any]]) -> str:
        return replies.pop(0) if replies else deterministic_chat_fn(messages)

    with FaultServer(chat_fn=chat_fn) as server:
        cfg = JudgeConfig("llm", "locomo", LOCOMO.prompt, _judge_endpoint(server.base_url))
        verdicts = []
        for _ in range(3):  # three runs sharing one response cache
            providers = build_providers(ProviderConfig(cache=CacheConfig("readwrite")), tmp_path)
            verdicts.append(build_judge(cfg, providers.judge(cfg)).judge(QUESTION, "7 May 2023"))
            providers.close()
        requests = len(server.requests)
    # run 1: the garbage reply is forgotten and asked again (with the repair message)
    assert (verdicts[0].status, verdicts[0].verdict, verdicts[0].attempts) == ("ok", True, 2)
    # run 2: the original request was forgotten, so the server is asked again; run 3: cached
    assert (verdicts[1].status, verdicts[1].cached, verdicts[1].attempts) == ("ok", False, 1)
    assert (verdicts[2].status, verdicts[2].cached) == ("ok", True)
    assert requests == 3
