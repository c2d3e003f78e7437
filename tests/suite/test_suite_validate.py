"""The suite validator names the JSON path of every problem in one line."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from bench.errors import DatasetError
from bench.suite.model import suite_to_json
from bench.suite.validate import load_suite, parse_suite, suite_problems
from tests.support.e2e_support import ROOT, run_cli

SMOKE = ROOT / "datasets/fixtures/suites/smoke.json"


def _smoke() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(SMOKE.read_text())
    return data


def test_smoke_suite_is_valid_and_round_trips() -> None:
    suite = load_suite(SMOKE)
    assert len(suite.memories) == 10 and len(suite.queries) == 6
    assert suite.queries[1].relevance == {"m3": 2, "m9": 1}
    assert suite.queries[5].abstention and not suite.queries[5].relevance
    assert parse_suite(suite_to_json(suite), where="round trip") == suite


def test_every_semantic_problem_is_named_by_path() -> None:
    data = _smoke()
    data["memories"][1]["id"] = "m1"
    data["memories"][2]["text"] = "   "
    data["queries"][0]["relevantMemoryIds"] = ["nope"]
    data["queries"][1]["queryId"] = "q1"
    data["queries"][3]["relevantMemoryIds"] = []
    problems = suite_problems(data)
    assert problems == [
        "$.memories[1].id duplicate id 'm1'",
        "$.memories[2].text is empty",
        "$.queries[0].relevantMemoryIds[0] unknown memory id 'nope'",
        "$.queries[1].queryId duplicate id 'q1'",
        "$.queries[3].relevantMemoryIds is empty and the query is not an abstention",
        "$.queries[4].relevantMemoryIds[0] unknown memory id 'm2'",  # m2 was renamed above
    ]


def test_schema_problems_name_their_path() -> None:
    data = copy.deepcopy(_smoke())
    data["version"] = 2
    del data["queries"][2]["text"]
    data["memories"][0]["id"] = "has space"
    problems = suite_problems(data)
    assert any(p.startswith("$.version ") for p in problems)
    assert any(p.startswith("$.queries[2] ") and "'text'" in p for p in problems)
    assert any(p.startswith("$.memories[0].id ") for p in problems)
    with pytest.raises(DatasetError, match=r"^suite here: \$\."):
        parse_suite(data, where="here")


def test_cli_reports_a_bad_suite_in_one_line(tmp_path: Path) -> None:
    data = _smoke()
    data["queries"][0]["forbiddenMemoryIds"] = ["ghost"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    proc = run_cli(
        f"suite.path={bad}", "arms=[rag]", f"out={tmp_path / 'out'}", module="bench.suite"
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"error: suite {bad}: $.queries[0].forbiddenMemoryIds[0] unknown memory id 'ghost': "
        "fix the file (format in docs/suites.md)"
    ]
    assert not (tmp_path / "out" / "report.json").exists()


def test_conforms_agrees_with_jsonschema_on_single_faults() -> None:
    """`conforms` is True only for what jsonschema accepts (then jsonschema is skipped)."""
    from jsonschema import Draft202012Validator

    from bench.suite.validate import conforms, suite_schema

    validator = Draft202012Validator(suite_schema())
    good = _smoke()
    assert conforms(good, suite_schema()) and not list(validator.iter_errors(good))
    faults: list[tuple[str, Any]] = [
        ("version", 2),
        ("version", True),
        ("name", ""),
        ("kind", 3),
        ("extra", 1),
        ("memories", {}),
        ("queries", None),
    ]
    memory_faults: list[tuple[str, Any]] = [
        ("id", "has space"),
        ("id", 7),
        ("text", None),
        ("date", 5),
        ("metadata", {"k": 1}),
        ("metadata", []),
        ("other", "x"),
    ]
    query_faults: list[tuple[str, Any]] = [
        ("relevanceGrades", {"m1": -1}),
        ("relevanceGrades", {"m1": True}),
        ("relevanceGrades", {"m1": 1.5}),
        ("relevantMemoryIds", "m1"),
        ("abstention", 1),
        ("forbiddenMemoryIds", [1]),
        ("queryId", ""),
    ]
    cases = []
    for key, value in faults:
        cases.append({**copy.deepcopy(good), key: value})
    for key, value in memory_faults:
        data = copy.deepcopy(good)
        data["memories"][3][key] = value
        cases.append(data)
    for key, value in query_faults:
        data = copy.deepcopy(good)
        data["queries"][2][key] = value
        cases.append(data)
    missing = copy.deepcopy(good)
    del missing["queries"][0]["relevantMemoryIds"]
    cases.append(missing)
    for data in cases:
        if conforms(data, suite_schema()):
            assert not list(validator.iter_errors(data)), data
        else:
            assert suite_problems(data)  # jsonschema words what is wrong


NOVAMEM = ROOT / "datasets/fixtures/suites/novamem/novamem-recall-smoke.json"


def test_novamem_fixture_loads_as_published() -> None:
    """NovaMem's own fixture, byte for byte: `"version": "1"`, `category`, `supersededBy`."""
    raw = json.loads(NOVAMEM.read_text())
    assert raw["version"] == "1"  # the string, as NovaMem writes it
    suite = load_suite(NOVAMEM)
    assert suite.version == 1 and suite.kind == "novamem-specific"
    assert [q.question_type for q in suite.queries] == [
        "long-term-chat-memory",
        "beir-rag-retrieval",
        "needle-retrieval",
        "agent-adoption",
    ]
    old = {m.id: m for m in suite.memories}["pref-reefmat-old"]
    assert old.superseded_by == "pref-reefmat-current"
    assert suite.queries[0].forbidden == ("pref-reefmat-old",)
    assert parse_suite(suite_to_json(suite), where="round trip") == suite


@pytest.mark.parametrize(
    ("version", "ok"), [(1, True), ("1", True), (2, False), ("2", False), (True, False)]
)
def test_version_is_one_as_integer_or_string(version: Any, ok: bool) -> None:
    data = {**_smoke(), "version": version}
    problems = suite_problems(data)
    assert (not problems) is ok, problems
    if not ok:
        assert problems[0].startswith("$.version ")


def test_superseded_by_an_unknown_memory_is_named() -> None:
    data = json.loads(NOVAMEM.read_text())
    data["memories"][1]["supersededBy"] = "ghost"
    assert suite_problems(data) == ["$.memories[1].supersededBy unknown memory id 'ghost'"]


def test_novamem_fixture_runs_through_bench_suite(tmp_path: Path) -> None:
    out = tmp_path / "nm"
    proc = run_cli(
        f"suite.path={NOVAMEM}",
        "arms=[rag]",
        f"out={out}",
        "progress=false",
        module="bench.suite",
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads((out / "report.json").read_text())
    assert report["arms"]["rag"]["scored_queries"] == 4
