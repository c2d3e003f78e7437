"""`judge=locomo_plus_official` against a local stub: LoCoMo-Plus's prompt, parameters, labels.

The oracle is upstream's `llm_as_judge.py`, read from the shared copy: its
`_judge_one_record` (with `get_judge_prompt`, `_parse_judge_response`, `label_to_score`
and `prompt.py`'s `PROMPT_TEMPLATES`) runs around a fake `call_model` that records what
it is asked. Two upstream rules live in files not in the shared copy and are restated
here: `utils.call_llm` sends `CONV_START_PROMPT.format("A", "B") + prompt.strip()` as one
user message, and `data/unified_input.py` gives the judge the cue's `A:`/`B:` lines with
the conversation's speaker names and a full-width colon as evidence.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from bench.config import CacheConfig, EndpointConfig, JudgeConfig, ProviderConfig
from bench.judge.judge_set import build_judges, judge_meta
from bench.judge.official.registry import judge_file
from bench.loaders.locomo import load_locomo
from bench.loaders.locomo_plus import load_locomo_plus
from bench.providers.factory import build_providers
from bench.types import Question
from tests.support.judge_stub import JudgeStub, shared_data_dir
from tests.support.upstream_oracle import compile_upstream

SHARED = shared_data_dir()
pytestmark = pytest.mark.skipif(
    SHARED is None or not (SHARED / "locomo-plus").is_dir(), reason="shared data absent"
)
OPEN: list[Any] = []


@pytest.fixture(autouse=True)
def _offline_data(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    monkeypatch.setenv("BENCH_DATA_DIR", str(SHARED))
    monkeypatch.setenv("BENCH_CACHE_DIR", str(tmp_path / "data-cache"))
    yield
    while OPEN:
        OPEN.pop().close()


def _upstream(reply: str) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]:
    asked: list[tuple[str, dict[str, Any]]] = []

    def call_model(prompt: str, **kwargs: Any) -> str:
        asked.append((prompt, kwargs))
        return reply

    judges = SHARED / "judges"  # type: ignore[operator]
    ns: dict[str, Any] = {"json": json, "re": re, "call_model": call_model}
    compile_upstream(
        judges / "locomo-plus-prompt.py", {"PROMPT_TEMPLATES", "CONV_START_PROMPT"}, ns
    )
    wanted = {"LABEL_TO_SCORE", "get_judge_prompt", "label_to_score", "_parse_judge_response"}
    compile_upstream(judges / "locomo-plus-llm_as_judge.py", wanted | {"_judge_one_record"}, ns)
    return ns, asked


ARGS = SimpleNamespace(model="gpt-4o-mini", backend="call_llm", temperature=0.0, max_tokens=512)
"""The judge script's argument defaults (judge.sh passes none of them)."""


def _judges(server: JudgeStub, tmp: Path) -> list[Any]:
    endpoint = EndpointConfig(
        kind="openai",
        model="gpt-4o-mini",
        base_url=server.base_url,
        temperature=0.0,
        max_tokens=512,
        max_attempts=1,
    )
    kind = "locomo_plus_official"
    cfg = JudgeConfig(kind, kind, "locomo-plus-prompt.py", endpoint)
    providers = build_providers(ProviderConfig(cache=CacheConfig("readwrite")), tmp)
    OPEN.append(providers)
    return list(build_judges([cfg], providers, 2))


@functools.cache
def _items() -> tuple[list[Question], list[dict[str, Any]], dict[str, tuple[str, str]]]:
    base = load_locomo(SHARED / "locomo10.json").conversations  # type: ignore[operator]
    path = SHARED / "locomo-plus" / "locomo_plus.json"  # type: ignore[operator]
    data = load_locomo_plus(path, base, seed=0)
    raw = json.loads(path.read_text(encoding="utf-8"))
    questions = [c.questions[0] for c in data.conversations]
    speakers = {c.questions[0].question_id: c.speakers for c in data.conversations}
    return questions, raw, speakers  # type: ignore[return-value]


def _evidence(cue: str, speakers: tuple[str, str]) -> str:
    """`unified_input.py`'s judge evidence, restated: A/B lines, names, full-width colon."""
    lines = []
    for line in cue.split("\n"):
        line = line.strip()
        if line[:2] in ("A:", "B:") and line[2:].strip():
            name = speakers[0] if line[0] == "A" else speakers[1]
            lines.append(f"{name}\uff1a{line[2:].strip()}")
    return "\n".join(lines)


@pytest.mark.slow
def test_prompts_match_upstreams_code(tmp_path: Path) -> None:
    questions, raw, speakers = _items()
    picked = questions[:12] + questions[-3:]
    answers = [f"{{pred}} answer {i} about {q.question_type}" for i, q in enumerate(picked)]
    with JudgeStub(lambda body: '{"label": "correct", "reason": "linked"}') as server:
        (judge,) = _judges(server, tmp_path)
        got = [judge.judge(q, a) for q, a in zip(picked, answers, strict=True)]
    ns, asked = _upstream('{"label": "correct", "reason": "linked"}')
    preamble = ns["CONV_START_PROMPT"].format("A", "B")
    for q, a, body, mine in zip(picked, answers, server.bodies, got, strict=True):
        item = raw[int(q.question_id[5:8])]
        evidence = _evidence(item["cue_dialogue"], speakers[q.question_id])
        record = {"category": "Cognitive", "evidence": evidence, "prediction": a}
        out = ns["_judge_one_record"](record, ARGS)
        prompt, kwargs = asked[-1]
        assert body["messages"] == [{"role": "user", "content": preamble + prompt.strip()}]
        assert (body["model"], body["temperature"], body["max_tokens"]) == (
            kwargs["model"],
            kwargs["temperature"],
            kwargs["max_tokens"],
        )
        assert "response_format" not in body
        assert mine.status == "ok" and mine.verdict is (out["judge_score"] == 1.0)
        assert mine.scores == {"score": out["judge_score"], "label": out["judge_label"]}


@pytest.mark.parametrize(
    "reply",
    [
        '{"label": "correct", "reason": "uses the cue"}',
        '{"label": "wrong", "reason": "no link"}',
        '{"reason": "first", "label": "correct"}',
        '```json\n{"label": "correct", "reason": "fenced"}\n```',
        "The answer is not correct.",
        "WRONG",
        "partial credit",
        '{"label": "Partial"}',
        '{"label": 1, "reason": "number"}',
        '{"label": "correct", "reason": 5}',
        "[]",
        "no verdict here",
    ],
)
def test_labels_follow_upstream(tmp_path: Path, reply: str) -> None:
    question = _items()[0][0]
    ns, _ = _upstream(reply)
    out = ns["_judge_one_record"](
        {"category": "Cognitive", "evidence": "e", "prediction": "p"}, ARGS
    )
    with JudgeStub(lambda body: reply) as server:
        (judge,) = _judges(server, tmp_path)
        got = judge.judge(question, "p")
    assert got.status == "ok" and got.raw == reply
    assert got.scores == {"score": out["judge_score"], "label": out["judge_label"]}
    assert got.verdict is (out["judge_score"] == 1.0)


def test_skips_other_questions_and_describes_itself(tmp_path: Path) -> None:
    with JudgeStub(lambda body: "correct") as server:
        judges = _judges(server, tmp_path)
        got = judges[0].judge(Question("conv-1:0", "conv-1", "When?", 2, "May"), "May")
    assert server.bodies == [] and got.status == "skipped"
    (meta,) = judge_meta(judges)
    files = [judge_file("locomo-plus-prompt.py"), judge_file("locomo-plus-llm_as_judge.py")]
    combined = hashlib.sha256("".join(f"{f.sha256}\n" for f in files).encode()).hexdigest()
    assert (meta.kind, meta.official_model, meta.model_differs) == (
        "locomo_plus_official",
        "gpt-4o-mini",
        False,
    )
    assert (meta.prompt_hash, meta.prompt_source) == (combined, files[0].url)


def test_no_upstream_prompt_text_in_the_project() -> None:
    from bench.judge.official.plus_templates import plus_templates

    root = Path(__file__).resolve().parents[2]
    judges = SHARED / "judges"  # type: ignore[operator]
    t = plus_templates(
        (judges / "locomo-plus-prompt.py").read_text(),
        (judges / "locomo-plus-llm_as_judge.py").read_text(),
    )
    texts = [*t.templates.values(), t.preamble]
    needles = {x.strip()[:40] for x in texts} | {x.strip()[-40:] for x in texts}
    files = [p for d in ("bench", "conf", "docs", "tests") for p in (root / d).rglob("*")]
    for path in [*files, root / "README.md", root / "CHANGELOG.md"]:
        if path.is_file() and path.suffix in (".py", ".md", ".yaml", ".txt", ".json"):
            text = path.read_text(encoding="utf-8", errors="replace")
            assert not any(n in text for n in needles), path


@pytest.mark.slow
def test_a_locomo_plus_run_is_judged_upstreams_way(tmp_path: Path) -> None:
    """End to end: bench.run dataset=locomo_plus judge=locomo_plus_official on three items."""
    from tests.support.e2e_support import load_records, run_cli

    out = tmp_path / "run"
    with JudgeStub(lambda body: '{"label": "partial", "reason": "some link"}') as server:
        proc = run_cli(
            "dataset=locomo_plus",
            "limit.conversations=3",
            "arms=[rag]",
            f"out={out}",
            "progress=false",
            "judge=locomo_plus_official",
            f"judges.0.endpoint.base_url={server.base_url}",
            "judges.0.endpoint.api_key_env=null",
            env={"BENCH_DATA_DIR": str(SHARED)},
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert len(server.bodies) == 3
    for record in load_records(out).values():
        result = record["arms"]["rag"]
        assert result["judgements"]["locomo_plus_official"]["scores"] == {
            "score": 0.5,
            "label": "partial",
        }
        assert (result["correct"], result["outcome"]) == (False, "judge:locomo_plus_official")


def test_a_changed_upstream_shape_is_refused() -> None:
    from bench.judge.official.plus_templates import plus_templates
    from bench.judge.official.templates import TemplateShapeError

    judges = SHARED / "judges"  # type: ignore[operator]
    prompt = (judges / "locomo-plus-prompt.py").read_text()
    script = (judges / "locomo-plus-llm_as_judge.py").read_text()
    changed = script.replace('pred=pred or ""', 'pred=(pred or "")[:500]')
    assert changed != script
    with pytest.raises(TemplateShapeError, match="get_judge_prompt"):
        plus_templates(prompt, changed)
    with pytest.raises(TemplateShapeError, match="Cognitive"):
        plus_templates(prompt.replace('"Cognitive":', '"cognitive":'), script)
