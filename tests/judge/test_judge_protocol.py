"""bench.judge.protocol: judges made whole by their constructor, rebuilt from their spec."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from bench.config import EndpointConfig, JudgeConfig
from bench.judge.judge_set import build_one, judge_meta, rebuild
from bench.judge.protocol import Judge, judge_run_ids
from bench.types import ChatResult

ENDPOINT = EndpointConfig(kind="openai", model="judge-model", base_url="https://u:p@h.example/v1")
LLM = JudgeConfig("j1", "locomo", "conf/prompts/judge_locomo_v2.txt", ENDPOINT, runs=3)
MEM0 = replace(LLM, judge_id="m0", kind="mem0_locomo", prompt="mem0-llm_judge.py")


class SilentChat:
    """A chat provider that is never asked (building a judge makes no call)."""

    model = "judge-model"

    def complete(self, messages: list[dict[str, Any]], **_: Any) -> ChatResult:
        raise AssertionError("building a judge must not call the model")


@pytest.mark.parametrize("cfg", [LLM, MEM0], ids=["llm", "official"])
def test_runs_are_whole_judges_rebuilt_from_their_spec(cfg: JudgeConfig) -> None:
    runs: list[Judge] = list(build_one(cfg, SilentChat(), 2))  # type: ignore[arg-type]
    assert [j.judge_id for j in runs] == [f"{cfg.judge_id}#{k}" for k in (1, 2, 3)]
    assert judge_run_ids(runs, cfg.judge_id) == [j.judge_id for j in runs]
    first, second = runs[0], runs[1]
    assert first.spec.run == 1 and second.spec.run == 2
    assert second.version == f"{first.version}#run2"  # type: ignore[attr-defined]
    again = rebuild(second.spec, SilentChat())  # type: ignore[arg-type]
    assert (again.judge_id, again.prompt_hash, again.meta, again.spec) == (
        second.judge_id,
        second.prompt_hash,
        second.meta,
        second.spec,
    )
    assert again.version == second.version  # type: ignore[attr-defined]
    (meta,) = judge_meta(runs)
    assert (meta.judge_id, meta.runs, meta.kind, meta.endpoint) == (
        cfg.judge_id,
        3,
        cfg.kind,
        "https://h.example/v1",
    )


def test_a_run_is_a_new_judge_not_a_patched_one() -> None:
    (judge,) = build_one(replace(LLM, runs=1), SilentChat(), 2)  # type: ignore[arg-type]
    other = judge.with_run("j1#2", 2)
    assert (judge.judge_id, judge.spec.run) == ("j1", 1)  # the original is unchanged
    assert (other.judge_id, other.spec.run, other.meta) == ("j1#2", 2, judge.meta)
