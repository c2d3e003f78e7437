"""`judge=beam_official` against a local stub: BEAM's prompts, parameters and score parsing.

The oracle is upstream's `compute_metrics.py` itself, read from the shared copy: the test
compiles its `evaluate_<ability>` functions (with their helpers and the template from
`prompts.py`) around a fake model that records every prompt and answers as the stub
does, then checks that armbench sent the same messages and computed the same scores.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from bench.config import CacheConfig, EndpointConfig, JudgeConfig, ProviderConfig
from bench.errors import ConfigError
from bench.judge.judge_set import build_judges, judge_meta
from bench.judge.official.registry import judge_file
from bench.loaders.beam import load_beam
from bench.providers.factory import build_providers
from bench.records import Judgement
from bench.types import Question
from tests.support.judge_stub import JudgeStub, shared_data_dir
from tests.support.upstream_oracle import compile_upstream

SHARED = shared_data_dir()
pytestmark = pytest.mark.skipif(
    SHARED is None or not (SHARED / "beam-100k").is_dir(), reason="shared data absent"
)
OPEN: list[Any] = []
ABILITIES = (
    "abstention",
    "contradiction_resolution",
    "event_ordering",
    "information_extraction",
    "instruction_following",
    "knowledge_update",
    "multi_session_reasoning",
    "preference_following",
    "summarization",
    "temporal_reasoning",
)


@pytest.fixture(autouse=True)
def _offline_data(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    monkeypatch.setenv("BENCH_DATA_DIR", str(SHARED))
    monkeypatch.setenv("BENCH_CACHE_DIR", str(tmp_path / "data-cache"))
    yield
    while OPEN:
        OPEN.pop().close()


def _reply(messages: list[dict[str, str]]) -> str:
    """The judge's reply to a message list, a fixed function of its text (stub and oracle)."""
    digest = hashlib.sha256(json.dumps(messages).encode()).digest()
    if messages[0]["role"] == "system":
        return "YES" if digest[0] % 2 else "No."
    score = (1.0, 0.5, 0.0)[digest[1] % 3]
    body = json.dumps({"score": score, "reason": "stub"})
    return (body, f"```json\n{body}\n```", f"Verdict: {body} done")[digest[2] % 3]


class _FakeModel:
    """Upstream's `model.invoke(...)`: records the input, answers as `_reply` does."""

    def __init__(self, reply: Any = _reply) -> None:
        self.calls: list[list[dict[str, str]]] = []
        self.reply = reply

    def invoke(self, given: Any) -> Any:
        messages = [{"role": "user", "content": given}] if isinstance(given, str) else given
        self.calls.append(messages)
        return SimpleNamespace(content=self.reply(messages))


def _no_repair(text: str) -> str:
    raise ValueError("json_repair is not run")


def _upstream() -> dict[str, Any]:
    from scipy.stats import kendalltau

    judges = SHARED / "judges"  # type: ignore[operator]
    ns: dict[str, Any] = {"re": re, "json": json, "kendalltau": kendalltau}
    ns.update(List=list, Tuple=tuple, repair_json=_no_repair)
    prompts = {"unified_llm_judge_base_prompt", "break_paragraph_to_facts_detailed_prompt"}
    compile_upstream(judges / "beam-prompts.py", prompts, ns)
    helpers = {"parse_json_response", "extract_facts", "llm_equivalence", "align_with_llm"}
    helpers |= {"event_ordering_score"} | {f"evaluate_{a}" for a in ABILITIES}
    return compile_upstream(judges / "beam-compute_metrics.py", helpers, ns)


def _judges(server: JudgeStub, tmp: Path, **extra: Any) -> list[Any]:
    endpoint = EndpointConfig(
        kind="openai",
        model="gpt-4.1-mini",
        base_url=server.base_url,
        temperature=0.0,
        max_tokens=1024,
        max_attempts=1,
    )
    cfg = JudgeConfig("beam_official", "beam_official", "beam-prompts.py", endpoint, **extra)
    providers = build_providers(ProviderConfig(cache=CacheConfig("readwrite")), tmp)
    OPEN.append(providers)
    return list(build_judges([cfg], providers, 2))


def _questions() -> list[Question]:
    data = load_beam(SHARED / "beam-100k")  # type: ignore[operator]
    return list(data.conversations[0].questions)


def _answer(q: Question, i: int) -> str:
    if q.question_type == "event_ordering":  # reference items reordered, one extra line
        return "\n".join([*reversed(q.rubric), "an unrelated step", ""])
    return f"Answer {i}: {{braces}} and a literal <rubric_item> stay as written."


def test_prompts_and_scores_match_upstreams_code(tmp_path: Path) -> None:
    questions = _questions()
    assert {q.question_type for q in questions} == set(ABILITIES)
    with JudgeStub(lambda body: _reply(body["messages"])) as server:
        (judge,) = _judges(server, tmp_path)
        got, ends = [], [0]
        for i, q in enumerate(questions):
            got.append(judge.judge(q, _answer(q, i)))
            ends.append(len(server.bodies))
    ns = _upstream()
    for i, (q, mine) in enumerate(zip(questions, got, strict=True)):
        model = _FakeModel()
        want = ns[f"evaluate_{q.question_type}"](
            rubric=list(q.rubric),
            llm_response=_answer(q, i),
            probing_question=q.question,
            model=model,
        )
        sent = [b["messages"] for b in server.bodies[ends[i] : ends[i + 1]]]
        if q.question_type == "event_ordering":  # the discarded fact-splitting call is not made
            assert model.calls[0] not in sent
            model.calls.pop(0)
        assert sorted(map(json.dumps, sent)) == sorted(set(map(json.dumps, model.calls)))
        assert mine.status == "ok" and mine.verdict is None
        assert mine.scores is not None
        assert mine.scores["rubric"] == want["llm_judge_score"], q.question_id
        assert len(mine.scores["rubric_items"]) == len(q.rubric)
        if q.question_type == "event_ordering":
            assert mine.scores["event_order_f1"] == round(want["f1"], 4)
            if math.isnan(want["final_score"]):
                assert mine.scores["event_order_score"] is None
            else:
                assert mine.scores["event_order_score"] == round(want["final_score"], 4)
    assert len(server.bodies) == len({json.dumps(b["messages"]) for b in server.bodies})
    for body in server.bodies:
        assert (body["model"], body["temperature"]) == ("gpt-4.1-mini", 0.0)
        assert "response_format" not in body
    kept = [g.scores["rubric_kept"] for g in got if g.scores]
    upstream = [g.scores["rubric"] for g in got if g.scores]
    assert any(k > u for k, u in zip(kept, upstream, strict=True))  # a 0.5 was judged somewhere


def test_the_rubric_prompt_is_filled_as_upstream_fills_it(tmp_path: Path) -> None:
    question = next(q for q in _questions() if q.question_type == "knowledge_update")
    with JudgeStub(lambda body: '{"score": 1}') as server:
        (judge,) = _judges(server, tmp_path)
        judge.judge(question, "It is <llm_response> now.")
    template = _upstream()["unified_llm_judge_base_prompt"]
    filled = template.replace("<rubric_item>", question.rubric[0]).replace(
        "<llm_response>", "It is <llm_response> now."
    )
    assert server.bodies[0]["messages"] == [{"role": "user", "content": filled}]
    assert "<question>" in filled  # upstream never fills the question into the template


@pytest.mark.parametrize("ability", ["knowledge_update", "event_ordering"])
@pytest.mark.parametrize(
    "reply",
    [
        '{"score": 1.0, "reason": "ok"}',
        '{"score": 0.5, "reason": "partly"}',
        '```json\n{"score": 0.5}\n```',
        'Here it is: {"score": 1} and more',
        '{"score": "1"}',
        '{"score": "0.5"}',
        '{"score": 0.7}',
        '{"reason": "no score"}',
        "[1, 0]",
        "not json at all",
        '{"score": null}',
    ],
)
def test_score_parsing_follows_upstream(tmp_path: Path, ability: str, reply: str) -> None:
    question = Question("b:1", "b", "q?", 3, "gold", question_type=ability, rubric=("An item",))
    model = _FakeModel(lambda m: "NO" if m[0]["role"] == "system" else reply)
    try:
        fn = _upstream()[f"evaluate_{ability}"]
        expected: Any = fn(rubric=["An item"], llm_response="r", probing_question="q?", model=model)
    except (ValueError, KeyError, TypeError):
        expected = "raises"
    with JudgeStub(lambda body: "NO" if body["messages"][0]["role"] == "system" else reply) as s:
        (judge,) = _judges(s, tmp_path)
        got = judge.judge(question, "r")
    if expected == "raises":
        assert (got.status, got.scores, got.raw) == ("unparseable", None, reply)
    else:
        assert got.status == "ok" and got.scores is not None
        assert got.scores["rubric"] == expected["llm_judge_score"]


def test_skips_non_beam_questions_and_describes_itself(tmp_path: Path) -> None:
    question = Question("conv-1:0", "conv-1", "When?", 2, "May")
    with JudgeStub(lambda body: '{"score": 1}') as server:
        judges = _judges(server, tmp_path, runs=3)
        got = judges[0].judge(question, "May")
    assert server.bodies == [] and got.status == "skipped"
    (meta,) = judge_meta(judges)
    files = [judge_file("beam-prompts.py"), judge_file("beam-compute_metrics.py")]
    combined = hashlib.sha256("".join(f"{f.sha256}\n" for f in files).encode()).hexdigest()
    assert (meta.kind, meta.runs, meta.official_model) == ("beam_official", 3, "gpt-4.1-mini")
    assert (meta.prompt_hash, meta.prompt_source) == (combined, files[0].url)


def test_a_failed_call_is_an_error_and_the_answered_items_are_cached(tmp_path: Path) -> None:
    question = next(q for q in _questions() if len(q.rubric) >= 3)
    calls: list[int] = []

    def flaky(body: dict[str, Any]) -> str:
        calls.append(1)
        return "" if len(calls) == 2 else '{"score": 1}'

    with JudgeStub(flaky) as server:
        (judge,) = _judges(server, tmp_path)
        first = judge.judge(question, "x")
        second = judge.judge(question, "x")
    assert first.status == "error" and "judge call failed" in (first.error or "")
    assert second.status == "ok" and second.scores is not None
    assert len(server.bodies) == len(question.rubric) + 1  # item 1 came from the cache


def test_cannot_be_the_primary_judge() -> None:
    from bench.config import RunConfig, ScoringConfig
    from bench.run.resume import check_primary_judge

    judge = JudgeConfig("beam_official", "beam_official", "beam-prompts.py", EndpointConfig())
    cfg = SimpleNamespace(judges=[judge], scoring=ScoringConfig(primary_judge="beam_official"))
    with pytest.raises(ConfigError, match="scores, not right/wrong"):
        check_primary_judge(cast(RunConfig, cfg))


def test_judgement_scores_round_trip_and_are_omitted_when_unset() -> None:
    from dataclasses import asdict

    from bench.records import ArmResult, QuestionRecord

    scored = Judgement("beam_official", "ok", scores={"rubric": 0.5, "rubric_kept": 0.75})
    plain = Judgement("llm", "ok", verdict=True)
    arm = ArmResult(status="ok", answer="a", judgements={"b": scored, "l": plain})
    record = QuestionRecord("q", "d", "c", 1, "q?", "g", [], {"rag": arm})
    body = record.to_json()
    judged = body["arms"]["rag"]["judgements"]
    assert judged["b"]["scores"] == {"rubric": 0.5, "rubric_kept": 0.75}
    assert "scores" not in judged["l"]
    back = QuestionRecord.from_json(json.loads(json.dumps(body)))
    assert asdict(back.arms["rag"].judgements["b"]) == asdict(scored)


def test_no_upstream_prompt_text_in_the_project() -> None:
    from bench.judge.official.beam_templates import beam_templates

    root = Path(__file__).resolve().parents[2]
    read = (SHARED / "judges" / "beam-prompts.py").read_text  # type: ignore[operator]
    metrics = (SHARED / "judges" / "beam-compute_metrics.py").read_text()  # type: ignore[operator]
    t = beam_templates(read(), metrics)
    texts = [t.rubric, t.equivalence_system]
    needles = {x.strip()[:50] for x in texts} | {x.strip()[-50:] for x in texts}
    files = [p for d in ("bench", "conf", "docs", "tests") for p in (root / d).rglob("*")]
    for path in [*files, root / "README.md", root / "CHANGELOG.md"]:
        if path.is_file() and path.suffix in (".py", ".md", ".yaml", ".txt", ".json"):
            text = path.read_text(encoding="utf-8", errors="replace")
            assert not any(n in text for n in needles), path


@pytest.mark.slow
def test_a_beam_run_stores_the_scores_and_summarises_them(tmp_path: Path) -> None:
    """End to end: bench.run with judge=beam_official on the smoke fixture, then the summary."""
    from bench.summarise.render import render_markdown
    from bench.summarise.render_json import summary_to_json
    from bench.summarise.summary import summarise_run
    from tests.support.e2e_support import load_records

    out = beam_run(tmp_path / "run", "0.5", "dataset=smoke_beam", "arms=[raw]")
    records = load_records(out)
    for record in records.values():
        assert record["rubric"] and "difficulty" in record
        scores = record["arms"]["raw"]["judgements"]["beam_official"]["scores"]
        assert (scores["rubric"], scores["rubric_kept"]) == (
            0.5 if record["question_type"] == "event_ordering" else 0.0,
            0.5,
        )
        assert record["arms"]["raw"]["outcome"] == "f1>=0.5"  # scores, not the outcome
    md = render_markdown(summarise_run(out))
    assert "## BEAM per ability" in md and "Judge `beam_official`" in md
    data = summary_to_json(summarise_run(out))["beam"]["judge:beam_official"]["raw"]
    assert data["knowledge_update"]["kept"] == 0.5 and data["knowledge_update"]["rubric"] == 0.0


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            'replace("<rubric_item>", item)',
            'replace("<rubric_item>", item.strip())',
            "expected unified_llm_judge_base_prompt",
        ),
        ("score += int(response['score'])", "score += float(response['score'])", "float scores"),
        ('if "yes" in response:', 'if "no" not in response:', "expected `if 'yes'"),
    ],
)
def test_a_changed_upstream_shape_is_refused(old: str, new: str, message: str) -> None:
    from bench.judge.official.beam_templates import beam_templates
    from bench.judge.official.templates import TemplateShapeError

    judges = SHARED / "judges"  # type: ignore[operator]
    metrics = (judges / "beam-compute_metrics.py").read_text()
    assert old in metrics
    with pytest.raises(TemplateShapeError, match=re.escape(message)):
        beam_templates((judges / "beam-prompts.py").read_text(), metrics.replace(old, new))


def beam_run(out: Path, score: str, *args: str) -> Path:
    """`bench.run judge=beam_official` against a stub scoring every rubric item `score`."""
    from tests.support.e2e_support import run_cli

    def reply(body: dict[str, Any]) -> str:
        return "yes" if body["messages"][0]["role"] == "system" else f'{{"score": {score}}}'

    with JudgeStub(reply) as server:
        proc = run_cli(
            *args,
            f"out={out}",
            "progress=false",
            "judge=beam_official",
            f"judges.0.endpoint.base_url={server.base_url}",
            "judges.0.endpoint.api_key_env=null",
            env={"BENCH_DATA_DIR": str(SHARED)},
        )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return out


@pytest.mark.slow
def test_a_rubric_judge_that_always_answers_1_is_flagged_degenerate(tmp_path: Path) -> None:
    """BEAM 100K's first conversation, raw and rag, a judge scoring every rubric item 1."""
    from bench.summarise.summary import summarise_run

    out = beam_run(tmp_path / "run", "1", "dataset=beam", "arms=[raw,rag]", "limit.conversations=1")
    summary = summarise_run(out)
    (flag,) = summary.flags.judges["beam_official"]
    assert flag.kind == "degenerate" and "100.0% accepted at mean F1 0.000" in flag.detail
    assert "judge-degenerate" in summary.verdict.arm_codes("raw")
