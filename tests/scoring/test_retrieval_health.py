"""Retrieval health: hidden caps, empty contexts, failed queries and the store probe.

The rules are checked on hand-made counts; the `http` arm is checked against the
deliberately broken local service of tests/support/broken_memory_server.py, in process (fast)
and through `python -m bench.run` as a user runs it (slow).
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import pytest

from arms.http import HttpArm, HttpConfig
from bench.arm import Arm, ArmServices
from bench.arm.probe import StoreProbe, probe_store
from bench.loaders.locomo import load_locomo
from bench.result_parts import QueryHealth
from bench.run.conversation import QuestionRun
from bench.run.ingest import ingest_arms
from bench.scoring import retrieval_health as rh
from bench.tokens import TokenCounter
from bench.types import Conversation
from tests.arms.test_engine_support import HashEmbedder
from tests.support.broken_memory_server import broken_server
from tests.support.e2e_support import ROOT, load_records, run_cli

SMOKE = ROOT / "datasets/fixtures/smoke_locomo.json"


def test_a_constant_count_below_k_and_below_the_store_is_a_probable_cap() -> None:
    capped = rh.RetrievalHealth(queries=13, items={3: 13}, requested_k=20, units=26)
    assert capped.cap() == 3
    assert capped.degraded
    assert (
        "all 13 queries returned exactly 3 items, k=20 asked, 26 turns ingested"
        in (capped.problems()[0])
    )


@pytest.mark.parametrize(
    "health",
    [
        rh.RetrievalHealth(queries=13, items={20: 13}, requested_k=20, units=26),  # = k
        rh.RetrievalHealth(queries=3, items={4: 3}, requested_k=20, units=4),  # = store size
        rh.RetrievalHealth(queries=4, items={3: 4}, requested_k=20, units=26),  # too few queries
        rh.RetrievalHealth(queries=13, items={3: 12, 5: 1}, requested_k=20, units=26),  # varies
        rh.RetrievalHealth(queries=13, items={3: 13}, requested_k=None, units=26),  # k unknown
        rh.RetrievalHealth(queries=13, items={3: 13}, requested_k=20, stored=3, probe="count"),
    ],
)
def test_no_cap_where_the_count_is_explained(health: rh.RetrievalHealth) -> None:
    assert health.cap() is None
    assert not health.degraded


def test_failed_empty_and_unstored_cross_the_extraction_threshold() -> None:
    one_in_ten = rh.RetrievalHealth(queries=10, failed=1, empty=1, items={5: 9})
    assert not one_in_ten.degraded  # 10% is the limit, not over it
    two_failed = rh.RetrievalHealth(queries=10, failed=2, timed_out=2, items={5: 8})
    assert two_failed.problems() == ["2 of 10 queries failed (2 timed out)"]
    unstored = rh.RetrievalHealth(stored=0, probe="recall")
    assert unstored.problems() == ["post-ingestion probe (recall) found nothing stored"]


def test_timeouts_are_told_from_other_failures() -> None:
    assert rh.query_failure("BenchError: cannot reach the service (ReadTimeout)").timed_out == 1
    assert rh.query_failure("ContractError: HTTP 400 'bad'").timed_out == 0


def test_sessions_add_up_and_the_table_round_trips_through_json() -> None:
    table: rh.RetrievalTable = {}
    rh.add_to(
        table, "http", "c1", rh.RetrievalHealth(requested_k=20, units=26, stored=3, probe="recall")
    )
    for _ in range(2):
        rh.add_to(table, "http", "c1", rh.query_result(3, empty=False))
    rh.add_to(table, "http", "c1", rh.query_failure("TimeoutError: timed out"))
    plain = json.loads(json.dumps(rh.table_to_json(table)))
    assert plain == {
        "http": {
            "c1": {
                "queries": 3,
                "failed": 1,
                "timed_out": 1,
                "empty": 0,
                "items": {"3": 2},
                "requested_k": 20,
                "units": 26,
                "stored": 3,
                "probe": "recall",
            }
        }
    }
    again = rh.table_from_json(plain)
    rh.merge(again, rh.table_from_json(plain))  # a second session's counts add on
    assert again["http"]["c1"].queries == 6
    assert again["http"]["c1"].items == {3: 4}
    assert rh.table_from_json({"http": {"c1": {"queries": "x"}}}) == {}


def test_the_default_probe_reads_a_reported_count_and_skips_silent_arms() -> None:
    conv = load_locomo(SMOKE, "smoke").conversations[0]
    assert probe_store(object(), conv, {"facts": 7, "chunks": 3}) == StoreProbe(7, "count")
    assert probe_store(object(), conv, {"turns": 26}) is None


def _retrieve_all(arm: HttpArm, conv: Conversation) -> rh.RetrievalTable:
    """Ingest (with the probe) and retrieve every question as the runner does."""
    table: rh.RetrievalTable = {}
    arms = cast(dict[str, Arm], {"http": arm})
    assert ingest_arms(arms, conv, retrieval=table) == {}
    none = cast(Any, None)  # retrieve uses only the arms, failures and the table
    with ThreadPoolExecutor(1) as pool:
        run = QuestionRun(arms, {}, none, none, none, pool, {}, table)
        got = [run.retrieve("http", q) for q in conv.questions]
    assert all(g.health and g.health.requested_k == 20 for g in got)
    return table


@pytest.mark.parametrize(
    ("mode", "problem"),
    [
        ("cap3", "probable hidden cap: all 13 queries returned exactly 3 items, k=20 asked, "
                 "26 turns ingested"),
        ("store_nothing", "13 of 13 contexts empty; post-ingestion probe (recall) found "
                          "nothing stored"),
        ("healthy", None),
    ],
)  # fmt: skip
def test_the_http_arm_against_a_broken_service(
    tmp_path: Path, mode: str, problem: str | None
) -> None:
    conv = load_locomo(SMOKE, "smoke").conversations[0]
    services = ArmServices(HashEmbedder(), TokenCounter(), tmp_path, tmp_path)
    with broken_server(mode) as url:
        arm = HttpArm("http", HttpConfig(base_url=url), services)
        try:
            table = _retrieve_all(arm, conv)
        finally:
            arm.close()
    warnings = rh.degraded_warnings(table)
    expected = [f"arm http unit smoke-1: retrieval degraded — {problem}"] if problem else []
    assert warnings == expected


def test_queries_that_time_out_are_counted_and_degrade_the_arm(tmp_path: Path) -> None:
    conv = load_locomo(SMOKE, "smoke").conversations[1]  # 3 questions: 3 timeouts + probe
    services = ArmServices(HashEmbedder(), TokenCounter(), tmp_path, tmp_path)
    fast = HttpConfig(probe=False, timeout_s=0.2, max_attempts=1, max_retry_time_s=0.5)
    with broken_server("slow_search") as url:
        arm = HttpArm("http", replace(fast, base_url=url), services)
        try:
            table: rh.RetrievalTable = {}
            arms = cast(dict[str, Arm], {"http": arm})
            assert ingest_arms(arms, conv, retrieval=table) == {}
            none = cast(Any, None)
            with ThreadPoolExecutor(1) as pool:
                run = QuestionRun(arms, {}, none, none, none, pool, {}, table)
                got = [run.retrieve("http", q) for q in conv.questions]
        finally:
            arm.close()
    assert [g.health for g in got] == [QueryHealth(failed=1, timed_out=1)] * 3
    # the total deadline (issue 29): the probe and two queries time out, then the arm's
    # circuit breaker (3 consecutive timeouts) fails the third query at once
    assert ["CallTimeout" in (g.error or "") for g in got] == [True, True, False]
    assert "circuit breaker is open" in (got[2].error or "")
    health = table["http"]["smoke-2"]
    assert (health.queries, health.failed, health.timed_out, health.probe) == (3, 3, 3, "")
    assert rh.degraded_warnings(table) == [
        "arm http unit smoke-2: retrieval degraded — 3 of 3 queries failed (3 timed out)"
    ]


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["cap3", "store_nothing"])
def test_a_run_against_a_broken_service_warns_and_exits_1(tmp_path: Path, mode: str) -> None:
    out = tmp_path / "run"
    with broken_server(mode) as url:
        done = run_cli(
            "dataset=smoke",
            "arms=[rag,http]",
            f"out={out}",
            "progress=false",
            f"arm_options.http.base_url={url}",
            "report=false",
        )
    assert done.returncode == 1, done.stderr[-2000:]
    expected = (
        "probable hidden cap: all 13 queries returned exactly 3 items"
        if mode == "cap3"
        else "post-ingestion probe (recall) found nothing stored"
    )
    assert "WARNING: arm http unit smoke-1: retrieval degraded — " in done.stderr
    assert expected in done.stderr
    assert "Traceback" not in done.stderr
    meta = json.loads((out / "run.json").read_text())["retrieval_health"]
    assert not rh.table_from_json(meta)["rag"]["smoke-1"].degraded
    records = load_records(out)
    http = [r["arms"]["http"]["retrieval"] for r in records.values()]
    assert http and all(h["requested_k"] == 20 for h in http)
    assert {h["items"] for h in http} == ({3} if mode == "cap3" else {0})
    summary = run_cli(str(out), module="bench.summarise")
    assert summary.returncode == 0
    assert "DEGRADED retrieval http" in summary.stdout
    assert "DEGRADED retrieval rag" not in summary.stdout


def test_a_query_redone_on_resume_replaces_the_failed_one() -> None:
    table: rh.RetrievalTable = {}
    for _ in range(5):
        rh.add_to(table, "http", "c1", rh.query_result(7, False))
    rh.add_to(table, "http", "c1", rh.query_failure("CallTimeout: no reply"))
    assert table["http"]["c1"].failed == 1 and table["http"]["c1"].queries == 6
    rh.add_to(table, "http", "c1", rh.retracted(QueryHealth(failed=1, timed_out=1)))
    rh.add_to(table, "http", "c1", rh.query_result(7, False))
    health = table["http"]["c1"]
    assert (health.queries, health.failed, health.timed_out, health.items) == (6, 0, 0, {7: 6})
    rh.add_to(table, "http", "c1", rh.retracted(QueryHealth(items=7)))  # an ok result redone
    assert table["http"]["c1"].items == {7: 5}
    assert rh.retracted(QueryHealth(items=0, empty=1)).items == {0: -1}


@pytest.mark.slow  # an offline predict session and an evaluate session (~10 s)
def test_missing_predictions_are_failed_queries_not_a_hidden_cap(tmp_path: Path) -> None:
    """Issue 40, defect 12: the closing line names the rule broken, never a cap it is not."""
    out, run = tmp_path / "run", ("dataset=smoke", "arms=[raw]", "progress=false")
    assert run_cli(*run, f"out={out}", "phase=predict").returncode == 0
    for path in sorted((out / "predictions").glob("smoke-1_*.json"))[:3]:
        path.unlink()
    done = run_cli(*run, f"out={out}", "phase=evaluate")
    # A missing prediction is permanent (issue 41): the run stops at the first one, in one
    # line naming it and the fix, exit 2; it is never reported as a hidden cap.
    assert done.returncode == 2, done.stderr[-2000:]
    line = done.stderr.strip().splitlines()[-1]
    assert line.startswith("error: ") and "no prediction for smoke-1:" in line, line
    assert "run phase=predict first" in line
    assert "hidden cap" not in done.stderr and "Traceback" not in done.stderr
