"""The tiny-model smoke, imitated on loopback: a degenerate self-judge is called out first.

A stub OpenAI-compatible server plays a 270M model: it echoes each question as the
answer, ends every reply with `<|im_end|>`, accepts every answer when asked to judge and
ignores `tools` (so the neuromorphic arm stores nothing). `python -m bench.run
dataset=smoke judge=llm` against it, then `python -m bench.summarise`: the summary's
first lines say the judge is degenerate and self-judging and the arm degraded, and the
tables carry the same marks.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.e2e_support import run_cli
from tests.support.fault_server import FaultServer

ENV = {"OPENAI_API_KEY": "sk-fake-degenerate-5e6f7a8b"}


def tiny_model(messages: list[dict[str, Any]]) -> str:
    """Accept whatever is judged; otherwise echo the last user message."""
    last = str(next(m["content"] for m in reversed(messages) if m.get("role") == "user"))
    if "Gold answer:" in last or "Reference:" in last:
        return '{"correct": true, "reasoning": "looks right"}<|im_end|>'
    return f"{last}<|im_end|>\n<|im_start|>user"


@pytest.mark.slow
def test_tiny_self_judge_is_flagged_first(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FaultServer(chat_fn=tiny_model) as server:
        server.ignore_tools()
        proc = run_cli(
            "dataset=smoke",
            f"out={out}",
            "progress=false",
            "provider=openai",
            "judge=llm",
            "arms=[raw,neuromorphic]",
            f"provider.answerer.base_url={server.base_url}",
            "provider.answerer.json_schema=false",
            "provider.answerer.max_attempts=2",
            "provider.embedder.kind=wordllama",
            "provider.embedder.model=wordllama/l2_supercat_256",
            "provider.embedder.dim=256",
            env=ENV,
        )
    assert proc.returncode == 1, proc.stderr[-2000:]  # degraded extraction
    record = json.loads(next((out / "questions").glob("*.json")).read_text())
    answer = record["arms"]["raw"]["answer"]
    assert answer == record["question"] and "<|im_end|>" not in answer  # end token cut
    summary = run_cli(str(out), "--write", module="bench.summarise")
    assert summary.returncode == 0, summary.stderr[-2000:]
    lines = (out / "SUMMARY.md").read_text().splitlines()
    assert lines[0].endswith("— DEGENERATE JUDGE")
    assert "DEGENERATE JUDGE: the primary judge llm" in lines[1]
    assert "degenerate — 100.0% accepted at mean F1" in lines[2]
    assert "self-judging" in lines[3]
    assert "DEGRADED arm neuromorphic: extraction degraded" in lines[4]
    assert summary.stdout.splitlines()[:5] == lines[:5]  # the console says the same first
    text = "\n".join(lines)
    assert "| arm [judge llm: degenerate, self-judging] |" in text
    assert "| neuromorphic [DEGRADED: extraction degraded, retrieval degraded] |" in text
