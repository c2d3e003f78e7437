"""Re-judging a finished run with another judge keeps every verdict; the summary compares."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from bench.records import ArmResult, Judgement, QuestionRecord
from bench.summarise.migration import migration_rows, render_migration
from bench.summarise.render import render_markdown
from bench.summarise.render_json import summary_to_json
from bench.summarise.stats import mcnemar_exact_p
from bench.summarise.summary import summarise_run
from tests.support.e2e_support import load_records, run_cli
from tests.support.judge_stub import JudgeStub, shared_data_dir


def _reply(body: dict[str, Any]) -> str:
    """A deterministic judge: the verdict is a hash bit of the prompt."""
    content = body["messages"][-1]["content"]
    bit = int(hashlib.sha256(content.encode()).hexdigest(), 16) % 3 != 0
    if (body.get("response_format") or {}).get("type") == "json_object":
        return json.dumps({"label": "CORRECT" if bit else "WRONG"})
    return json.dumps({"reasoning": "stub", "correct": not bit})


def _judge(server: JudgeStub, name: str, model: str | None = None) -> list[str]:
    args = [
        f"judge={name}",
        f"judges.0.endpoint.base_url={server.base_url}",
        "judges.0.endpoint.api_key_env=null",
        "scoring.primary_judge=null",
    ]
    if name == "llm":
        args += ["judges.0.endpoint.kind=openai", f"judges.0.endpoint.model={model}"]
    return args


@pytest.mark.slow
def test_rejudging_keeps_earlier_verdicts_and_measures_the_switch(tmp_path: Path) -> None:
    shared = shared_data_dir()
    if shared is None:
        pytest.skip("shared data (judges/) absent")
    out = tmp_path / "run"
    base = ["dataset=smoke", "arms=[raw]", f"out={out}", "progress=false"]
    env = {"BENCH_DATA_DIR": str(shared)}
    with JudgeStub(_reply) as server:
        first = run_cli(*base, *_judge(server, "llm", "old-judge"), env=env)
        assert first.returncode == 0, first.stderr[-2000:]
        before = load_records(out)
        second = run_cli(*base, *_judge(server, "mem0_locomo"), env=env)
        assert second.returncode == 0, second.stderr[-2000:]
        again = run_cli(*base, *_judge(server, "mem0_locomo"), "scoring.rejudge=true", env=env)
        assert again.returncode == 0, again.stderr[-2000:]
    after = load_records(out)
    pairs = []
    for qid, record in after.items():
        for arm, result in record["arms"].items():
            old = before[qid]["arms"][arm]["judgements"]["llm"]
            assert result["judgements"]["llm"] == old  # kept byte for byte
            new = result["judgements"]["mem0_locomo"]
            if record["category"] == 5:
                assert new["status"] == "skipped"
            elif old["status"] == "ok" and new["status"] == "ok":
                pairs.append((old["verdict"], new["verdict"]))
    a_only = sum(a and not b for a, b in pairs)
    b_only = sum(b and not a for a, b in pairs)
    summary = summarise_run(out)
    md = render_markdown(summary)
    assert "## Judge migration" in md
    (total,) = [r for r in summary_to_json(summary)["judge_migration"] if r["group"] == "all"]
    assert (total["n"], total["a_only"], total["b_only"]) == (len(pairs), a_only, b_only)
    row = f"| llm → mem0_locomo | all | {len(pairs)} |"
    assert row in md
    line = next(x for x in md.splitlines() if x.startswith(row))
    assert line.endswith(f"| {a_only} | {b_only} | {mcnemar_exact_p(a_only, b_only):.3g} |")


def _record(qid: str, category: int, verdicts: dict[str, bool]) -> QuestionRecord:
    judgements = {j: Judgement(j, "ok", v) for j, v in verdicts.items()}
    arm = ArmResult(status="ok", correct=None, judgements=judgements)
    return QuestionRecord(qid, "d", "c", category, "q", "g", [], {"raw": arm})


def test_runs_count_as_one_judge_by_majority() -> None:
    records = [
        _record("c:1", 1, {"a": True, "b#1": False, "b#2": False, "b#3": True}),
        _record("c:2", 1, {"a": False, "b#1": True, "b#2": True, "b#3": False}),
        _record("c:3", 2, {"a": True, "b#1": True, "b#2": True, "b#3": True}),
        _record("c:4", 2, {"a": True}),
    ]
    rows = {(r.group): r for r in migration_rows(records, locomo_style=True)}
    assert set(rows) == {"all", "1", "2"}
    total = rows["all"]
    assert (total.judge_a, total.judge_b, total.n) == ("a", "b", 3)
    assert (total.accepted_a, total.accepted_b, total.a_only, total.b_only) == (2, 2, 1, 1)
    assert total.p == mcnemar_exact_p(1, 1) == 1.0
    assert rows["1"].kappa == pytest.approx(-1.0)
    assert "multi-hop" in "\n".join(render_migration(list(rows.values()), True))
    assert migration_rows(records[3:], True) == []
