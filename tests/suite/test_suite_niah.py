"""NIAH suites: deterministic for a seed, needles where asked, and runnable at 1k-100k
tokens with every default arm (`python -m bench.perf niah` adds 1M)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.loaders import load_locomo
from bench.suite.model import suite_to_json
from bench.suite.niah import NiahSpec, niah_suite
from bench.suite.niah_write import SMOKE, default_source, write_niah
from bench.suite.validate import parse_suite
from bench.tokens import TokenCounter
from tests.support.e2e_support import run_cli


@pytest.fixture(scope="module")
def source():  # type: ignore[no-untyped-def]
    return load_locomo(SMOKE).conversations


def test_same_seed_same_suite_other_seed_other_needles(source) -> None:  # type: ignore[no-untyped-def]
    tokens = TokenCounter()
    a = niah_suite(source, NiahSpec(size=2000, seed=3), tokens)
    b = niah_suite(source, NiahSpec(size=2000, seed=3), tokens)
    c = niah_suite(source, NiahSpec(size=2000, seed=4), tokens)
    assert suite_to_json(a) == suite_to_json(b)
    assert [q.expected_answer for q in a.queries] != [q.expected_answer for q in c.queries]


def test_needles_sit_at_their_depths_and_the_suite_is_valid(source) -> None:  # type: ignore[no-untyped-def]
    tokens = TokenCounter()
    suite = niah_suite(source, NiahSpec(size=5000, seed=0, depths=(0.0, 0.5, 1.0)), tokens)
    parse_suite(suite_to_json(suite), where="niah")  # raises on any problem
    ids = [m.id for m in suite.memories]
    hay = sum(1 for i in ids if i.startswith("h"))
    assert sum(tokens.count_many([m.text for m in suite.memories if m.id.startswith("h")])) >= 5000
    assert ids.index("needle0") == 0
    assert abs(ids.index("needle1") - ids.index("h" + str(hay // 2))) <= 3
    assert ids.index("needle2") >= hay  # depth 1.0: after the last haystack memory
    assert ids.index("stale0") < ids.index("update0")
    by_id = {q.query_id: q for q in suite.queries}
    assert by_id["superseded"].forbidden == ("stale0",)
    assert set(by_id["multi"].relevance) == {"needle0", "needle1", "needle2"}
    texts = {m.id: m.text for m in suite.memories}
    # a near-duplicate differs from its needle only in the adjective and the code
    assert texts["distractor0"].split()[2:4] == texts["needle0"].split()[2:4]


def _run(suites: Path, out: Path, *overrides: str) -> dict:  # type: ignore[type-arg]
    proc = run_cli(
        f"suite.path={suites}",
        "suite.adapter=niah",
        f"out={out}",
        "progress=false",
        *overrides,
        module="bench.suite",
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    report: dict = json.loads((out / "report.json").read_text())  # type: ignore[type-arg]
    for diag in report["arms"].values():
        recalls = [diag["retrieval"]["byK"][str(k)]["recall"] for k in (10, 20, 50, 200)]
        assert recalls == sorted(recalls)  # deeper cutoffs never lose a relevant memory
        assert diag["safety"]["forbiddenHitRateAtK"]["10"] is not None
    return report


@pytest.mark.slow
def test_niah_1k_and_10k_run_with_every_default_arm(tmp_path: Path) -> None:
    suites = tmp_path / "suites"
    write_niah(suites, [1_000, 10_000], 0, default_source())
    report = _run(suites, tmp_path / "run")
    assert list(report["arms"]) == ["raw", "rag", "neuromorphic", "tuned"]
    assert report["suite"]["queries"] == 2 * 5
    card = json.loads((tmp_path / "run" / "comparable" / "raw.json").read_text())
    small = [e for e in card["evaluations"] if e["query_id"].startswith("niah-1000-s0/")]
    # raw lists every unit of a 1k-token haystack (< 200 memories): all needles are found
    assert small and all(None not in e["relevant_ranks"].values() for e in small)


@pytest.mark.slow
def test_niah_100k_runs_with_every_default_arm(tmp_path: Path) -> None:
    """About 11 s of CPU for neuromorphic + tuned together (6.5 s for raw + rag), so all
    four run here; `python -m bench.perf niah` adds 1M."""
    suites = tmp_path / "suites"
    write_niah(suites, [100_000], 0, default_source())
    report = _run(suites, tmp_path / "run")
    assert list(report["arms"]) == ["raw", "rag", "neuromorphic", "tuned"]
    assert report["suite"]["memories"] > 3000 and report["suite"]["queries"] == 5
    for arm in ("rag", "neuromorphic", "tuned"):  # the single needle is found by search
        assert report["arms"][arm]["retrieval"]["byK"]["200"]["recall"] > 0, arm
