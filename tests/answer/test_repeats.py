"""`repeats=N`: distinct cache keys per draw, resumable storage, the summary's noise view.

The end-to-end runs go through the fault server's seeded sampling mode (a repeated
request may get a different answer or a flipped verdict) over real HTTP on loopback;
the deterministic offline run reports `deterministic: repeats skipped`.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest
from statsmodels.stats.inter_rater import cohens_kappa, fleiss_kappa

from bench.answer.repeat_plan import RepeatPlan, plan_repeats
from bench.answer.repeats import pending
from bench.config import EndpointConfig, JudgeConfig
from bench.providers.cache import repeat_version
from bench.records import ArmResult, Judgement, QuestionRecord, RepeatResult
from bench.runmeta import DETERMINISTIC
from bench.summarise.stats import cohen_kappa
from bench.summarise.stats import fleiss_kappa as our_fleiss
from tests.run.test_fault_e2e import ENV
from tests.run.test_fault_e2e import smoke_overrides as fault_overrides
from tests.support.e2e_support import load_records, run_cli, strip_timings
from tests.support.fault_server import FaultServer

SAMPLING = (
    "provider.answerer.temperature=0.7",
    "provider.answerer.concurrency=1",
    "arms=[raw,rag]",
)


def smoke_overrides(base_url: str, out: Path, *extra: str) -> list[str]:
    """The fault-e2e smoke run with generous timeouts: a request retried after a client
    timeout would be a second occurrence at the sampling server, hence another draw."""
    kept = [o for o in fault_overrides(base_url, out) if ".timeout_s=" not in o]
    return [*kept, "provider.answerer.timeout_s=60", "provider.embedder.timeout_s=60", *extra]


def _ratings(seed: int, items: int, raters: int) -> list[list[bool]]:
    rng = random.Random(seed)
    return [[rng.random() < 0.6 for _ in range(raters)] for _ in range(items)]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("raters", [2, 3, 5])
def test_fleiss_kappa_equals_statsmodels(seed: int, raters: int) -> None:
    ratings = _ratings(seed, 40, raters)
    counts = [[sum(r), raters - sum(r)] for r in ratings]
    ours, n = our_fleiss(ratings)
    assert n == 40 and ours == pytest.approx(fleiss_kappa(counts), abs=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_cohen_kappa_of_two_repeats_equals_statsmodels(seed: int) -> None:
    ratings = _ratings(seed, 50, 2)
    table = [[0, 0], [0, 0]]
    for a, b in ratings:
        table[int(a)][int(b)] += 1
    ours, _ = cohen_kappa((a, b) for a, b in ratings)
    assert ours == pytest.approx(cohens_kappa(table).kappa, abs=1e-12)


def test_fleiss_kappa_is_undefined_for_one_category() -> None:
    assert our_fleiss([[True, True, True]] * 4) == (None, 4)
    with pytest.raises(ValueError):
        our_fleiss([[True, False], [True]])


def test_repeat_zero_keeps_the_single_run_cache_key() -> None:
    assert repeat_version("v1", 0) == "v1"
    assert len({repeat_version("v1", r) for r in range(4)}) == 4


def _cfg(kind: str, temperature: float, judge_kind: str | None) -> Any:
    from types import SimpleNamespace

    answerer = SimpleNamespace(kind=kind, temperature=temperature)
    endpoint = EndpointConfig(kind=judge_kind or "offline")
    judges = [JudgeConfig("llm", "locomo", "p", endpoint)] if judge_kind else []
    return SimpleNamespace(repeats=3, provider=SimpleNamespace(answerer=answerer), judges=judges)


@pytest.mark.parametrize(
    ("kind", "temperature", "judge", "answers", "judges"),
    [
        ("offline", 0.7, None, False, False),
        ("openai", 0.0, None, False, False),
        ("openai", 0.0, "openai", False, True),
        ("openai", 0.7, None, True, False),
        ("openai", 0.7, "openai", True, True),
        ("offline", 0.0, "offline", False, False),
    ],
)
def test_plan_detects_what_varies(kind, temperature, judge, answers, judges) -> None:
    plan = plan_repeats(_cfg(kind, temperature, judge))
    assert (plan.answers, plan.judges) == (answers, judges)
    assert (plan.skipped is not None) == (not answers and not judges)


def test_pending_until_every_repeat_is_ok_and_judged() -> None:
    judge = type("J", (), {"judge_id": "llm", "model": "m", "prompt_hash": "h"})()
    ok = Judgement("llm", "ok", True, "m", "h")
    plan = RepeatPlan(3, answers=True, judges=True)
    done = [RepeatResult(r, "ok", "a", True, {"llm": ok}) for r in (1, 2)]
    assert not pending(ArmResult("ok", answer="a", repeats=done), plan, [judge])
    assert pending(ArmResult("ok", answer="a", repeats=done[:1]), plan, [judge])
    failed = [done[0], RepeatResult(2, "error", error="boom")]
    assert pending(ArmResult("ok", answer="a", repeats=failed), plan, [judge])
    other = [
        RepeatResult(r, "ok", "a", True, {"llm": Judgement("llm", "ok", True, "m2", "h")})
        for r in (1, 2)
    ]
    assert pending(ArmResult("ok", answer="a", repeats=other), plan, [judge])
    assert not pending(ArmResult("ok", answer="a"), RepeatPlan(3), [judge])  # nothing varies


def test_records_round_trip_their_repeats() -> None:
    result = ArmResult("ok", answer="a", correct=True, repeats=[RepeatResult(1, "ok", "b", False)])
    record = QuestionRecord("q:0", "smoke", "c", 1, "q?", "g", [], {"raw": result})
    data = record.to_json()
    assert data["arms"]["raw"]["repeats"][0]["repeat"] == 1
    assert QuestionRecord.from_json(data) == record
    single = QuestionRecord("q:0", "smoke", "c", 1, "q?", "g", [], {"raw": ArmResult("ok")})
    assert "repeats" not in single.to_json()["arms"]["raw"]  # single runs are unchanged


def _chat_requests(server: FaultServer) -> int:
    return sum(1 for r in server.requests if r.path.endswith("/chat/completions") and not r.tools)


def _summary(out: Path) -> tuple[str, dict[str, Any]]:
    text = run_cli(str(out), module="bench.summarise")
    assert text.returncode == 0, text.stderr[-2000:]
    data = run_cli(str(out), "--json", module="bench.summarise")
    return text.stdout, json.loads(data.stdout)


@pytest.fixture(scope="module")
def sampled(tmp_path_factory) -> dict[str, Any]:
    """One uninterrupted `repeats=3` run, and one made as repeats=1 then resumed as 3."""
    base = tmp_path_factory.mktemp("repeats")
    runs: dict[str, Any] = {}
    with FaultServer(sampling=0.3, seed=11) as server:
        out = base / "straight"
        proc = run_cli(*smoke_overrides(server.base_url, out, *SAMPLING, "repeats=3"), env=ENV)
        assert proc.returncode == 0, proc.stderr[-3000:]
        runs["straight"] = out
        copy = base / "rejudged"
        shutil.copytree(out, copy)
        server.clear_log()
        extra = (*SAMPLING, "repeats=3", "scoring.rejudge=true")
        again = run_cli(*smoke_overrides(server.base_url, copy, *extra), env=ENV)
        assert again.returncode == 0, again.stderr[-3000:]
        runs["rejudged"], runs["rejudge_requests"] = copy, _chat_requests(server)
    with FaultServer(sampling=0.3, seed=11) as server:
        out = base / "grown"
        single = run_cli(*smoke_overrides(server.base_url, out, *SAMPLING), env=ENV)
        assert single.returncode == 0, single.stderr[-3000:]
        runs["single_records"] = load_records(out)
        first = _chat_requests(server)
        server.clear_log()
        grown = run_cli(*smoke_overrides(server.base_url, out, *SAMPLING, "repeats=3"), env=ENV)
        assert grown.returncode == 0, grown.stderr[-3000:]
        runs["grown"], runs["first_requests"] = out, first
        runs["grown_requests"] = _chat_requests(server)
    return runs


@pytest.mark.slow
def test_every_arm_holds_two_repeats_with_their_own_verdicts(sampled) -> None:
    records = load_records(sampled["straight"])
    assert len(records) == 16
    for record in records.values():
        for result in record["arms"].values():
            assert [r["repeat"] for r in result["repeats"]] == [1, 2]
            assert all(r["status"] == "ok" and "llm" in r["judgements"] for r in result["repeats"])
    meta = json.loads((sampled["straight"] / "run.json").read_text())
    assert meta["repeats"] == {"requested": 3, "answers": True, "judges": True, "skipped": None}


@pytest.mark.slow
def test_repeat_zero_keeps_the_single_run_results_and_cache(sampled) -> None:
    """Growing a finished run to repeats=3 replays repeat 0 from the cache (only the new
    draws reach the server) and leaves every repeat-0 result as the single run wrote it."""
    assert sampled["first_requests"] > 0 and sampled["grown_requests"] > 0
    grown = load_records(sampled["grown"])
    for qid, record in sampled["single_records"].items():
        for arm, result in record["arms"].items():
            now = {k: v for k, v in grown[qid]["arms"][arm].items() if k != "repeats"}
            assert now["cached"] and now["judgements"]["llm"]["cached"]
            before = strip_timings({"arms": {arm: result}})["arms"][arm]
            after = strip_timings({"arms": {arm: now}})["arms"][arm]
            assert _uncached(after) == _uncached(before)


def _uncached(result: dict[str, Any]) -> dict[str, Any]:
    """A result without its `cached` flags (a replay from the cache is the same result)."""
    clone = {k: v for k, v in result.items() if k != "cached"}
    clone["judgements"] = {
        j: {k: v for k, v in verdict.items() if k != "cached"}
        for j, verdict in result.get("judgements", {}).items()
    }
    if "repeats" in result:
        clone["repeats"] = [_uncached(draw) for draw in result["repeats"]]
    return clone


@pytest.mark.slow
def test_a_resumed_run_equals_an_uninterrupted_one(sampled) -> None:
    def view(out: Path) -> dict[str, Any]:
        records = {q: strip_timings(r) for q, r in load_records(out).items()}
        for record in records.values():
            record["arms"] = {a: _uncached(r) for a, r in record["arms"].items()}
        return records

    assert view(sampled["grown"]) == view(sampled["straight"])


@pytest.mark.slow
def test_rejudge_asks_every_draw_under_its_own_key(sampled) -> None:
    """Re-judging replays each draw's verdict from its own cached key: nothing is sent and
    nothing changes (a draw judged under repeat 0's key would take repeat 0's verdict)."""
    assert sampled["rejudge_requests"] == 0
    before, after = load_records(sampled["straight"]), load_records(sampled["rejudged"])
    for qid, record in before.items():
        for arm, result in record["arms"].items():
            assert _uncached(after[qid]["arms"][arm]) == _uncached(result)
            draws = after[qid]["arms"][arm]["repeats"]
            assert all(d["judgements"]["llm"]["cached"] for d in draws)


@pytest.mark.slow
def test_summary_prints_means_sds_flip_rates_and_noise(sampled) -> None:
    text, data = _summary(sampled["straight"])
    assert "## Repeats (3 draws per question and arm)" in text
    assert "| arm | n | per repeat | mean | SD | flip rate | judge κ (items) |" in text
    assert "exceeds noise" in text
    view = data["repeats"]
    assert view["requested"] == 3 and view["skipped"] is None
    arms = {a["arm"]: a for a in view["arms"]}
    assert set(arms) == {"raw", "rag"}
    records = load_records(sampled["straight"])
    for name, arm in arms.items():
        outcomes = [
            [r["arms"][name]["correct"]] + [d["correct"] for d in r["arms"][name]["repeats"]]
            for r in records.values()
            if r["category"] != 5
        ]
        assert arm["n"] == len(outcomes)
        per_repeat = [sum(o[i] for o in outcomes) / len(outcomes) for i in range(3)]
        assert arm["accuracies"] == pytest.approx(per_repeat)
        assert arm["flipped"] == sum(len(set(o)) > 1 for o in outcomes)
        assert arm["judges"][0]["method"] == "fleiss"
    assert sum(a["flipped"] for a in arms.values()) > 0  # sampling did vary the outcomes
    assert any(a["sd"] > 0 for a in arms.values())
    (pair,) = view["pairs"]
    diffs = [
        a - b for a, b in zip(arms["raw"]["accuracies"], arms["rag"]["accuracies"], strict=True)
    ]
    assert pair["mean_diff"] == pytest.approx(sum(diffs) / 3)
    assert pair["exceeds"] == (abs(pair["mean_diff"]) > 2 * pair["sd_diff"])


@pytest.mark.slow
def test_dry_run_counts_every_draw(tmp_path: Path) -> None:
    from tests.run.test_dry_run import estimate

    rows = []
    with FaultServer() as server:
        for n in (1, 3):
            extra = (*SAMPLING, f"repeats={n}", "dry_run=true")
            proc = run_cli(*smoke_overrides(server.base_url, tmp_path / "run", *extra), env=ENV)
            assert proc.returncode == 0, proc.stderr[-2000:]
            rows.append(estimate(proc.stdout))
        assert server.requests == []  # a dry run calls nothing
    for role in ("answerer", "judge:llm"):
        assert rows[1][role]["requests"] == 3 * rows[0][role]["requests"] > 0


@pytest.mark.slow
def test_deterministic_offline_run_says_repeats_skipped(tmp_path: Path) -> None:
    out = tmp_path / "offline"
    proc = run_cli(
        "dataset=smoke", f"out={out}", "progress=false", "repeats=3", "limit.questions=2"
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert DETERMINISTIC in proc.stderr
    for record in load_records(out).values():
        assert all("repeats" not in r for r in record["arms"].values())
    text, data = _summary(out)
    assert DETERMINISTIC in text
    assert data["repeats"]["skipped"].startswith(DETERMINISTIC)


def test_repeats_below_one_is_one_error_line(tmp_path: Path) -> None:
    proc = run_cli("dataset=smoke", f"out={tmp_path / 'x'}", "progress=false", "repeats=0")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1].startswith("error: repeats=0")
