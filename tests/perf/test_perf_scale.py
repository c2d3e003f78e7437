"""`python -m bench.perf scale`: growth exponents, settings, workloads and bad-growth flags."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bench.errors import ConfigError
from bench.perf.growth import growth_exponent, verdict
from bench.perf.scale import (
    FIXTURE,
    beam_folder,
    check_arms,
    figures,
    flags,
    parse_settings,
    prefixes,
)
from bench.suite.adapters import load_suites
from bench.tokens import TokenCounter
from tests.support.e2e_support import ROOT


def _slope(xs: list[float], ys: list[float]) -> float:
    """The least-squares slope of log y on log x, written out (not numpy's polyfit)."""
    lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly, strict=True)) / sum(
        (a - mx) ** 2 for a in lx
    )


def test_power_law_gives_its_exponent() -> None:
    n = [1e3, 1e4, 1e5, 1e6]
    fit = growth_exponent(n, [3 * x**1.5 for x in n])
    assert fit == {"exponent": 1.5, "r2": 1.0, "points": 4, "growth": "super-linear"}
    assert growth_exponent(n, [7.0] * 4) == {
        "exponent": 0.0,
        "r2": 1.0,
        "points": 4,
        "growth": "flat",
    }
    noisy = [2.0, 9.0, 110.0, 950.0]
    assert growth_exponent(n, noisy)["exponent"] == round(_slope(n, noisy), 3)  # type: ignore[index]


def test_unplaceable_points_are_left_out_and_one_length_is_no_fit() -> None:
    assert growth_exponent([10, 10], [1, 2]) is None
    assert growth_exponent([10, 100, 1000], [0, 5, 50]) == {
        "exponent": 1.0,
        "r2": 1.0,
        "points": 2,
        "growth": "linear",
    }


@pytest.mark.parametrize(
    ("exponent", "growth"),
    [(0.0, "flat"), (0.24, "flat"), (0.5, "sub-linear"), (0.85, "linear"), (1.15, "linear"),
     (1.16, "super-linear"), (float("nan"), "unknown")],
)  # fmt: skip
def test_verdict_bands(exponent: float, growth: str) -> None:
    assert verdict(exponent) == growth


def test_settings_parse_and_quick_mode() -> None:
    quick = parse_settings(["scale.quick=true", "scale.arms=[rag, tuned]", "scale.seed=3"])
    assert quick.quick and quick.niah == (2000, 4000, 8000) and quick.fractions == (0.5, 1.0)
    assert quick.arms == ("rag", "tuned") and quick.seed == 3
    assert parse_settings(["scale.niah=100,200", "scale.isolate=false"]).niah == (100, 200)
    assert parse_settings(["scale.fractions=[]"]).fractions == ()  # the series left out


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("scale.bogus=1", "key one of arms"),
        ("arms=[rag]", "expected scale.<key>=<value>"),
        ("scale.fractions=0,1", "scale.fractions=0,1: not a valid value"),
        ("scale.niah=ten", "scale.niah=ten: not a valid value"),
        ("scale.isolate=maybe", "give true or false"),
    ],
)
def test_bad_settings_are_one_config_error(override: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace(".", r"\.")):
        parse_settings([override])


def test_arms_are_checked_up_front() -> None:
    with pytest.raises(ConfigError, match="scale.arms is empty"):
        check_arms(())
    with pytest.raises(ConfigError, match="unknown arm 'rga'"):
        check_arms(("rga",))
    check_arms(("rag", "tuned"))


def test_prefixes_cut_at_token_fractions_and_keep_inside_queries() -> None:
    suite = load_suites("beam", FIXTURE, "test")[0]
    tokens = TokenCounter()
    counts = tokens.count_many([m.text for m in suite.memories])
    half, whole = prefixes(suite, (1.0, 0.5), tokens)
    assert whole.memories == suite.memories and half.name.endswith("-p0500")
    cut = len(half.memories)
    assert sum(counts[:cut]) >= sum(counts) / 2 > sum(counts[: cut - 1])
    inside = {m.id for m in half.memories}
    assert half.queries and all(set(q.relevance) <= inside for q in half.queries)
    assert len(half.queries) < len(whole.queries)


def _rows(tokens: list[int], cpu: list[float], hot: list[int]) -> list[dict[str, Any]]:
    return [
        {
            "series": "niah",
            "workload": f"w{t}",
            "tokens": t,
            "ingest_cpu_s": c,
            "store_bytes": t * 10,
            "stats": {"hot_valid": h},
            "isolated": True,
        }
        for t, c, h in zip(tokens, cpu, hot, strict=True)
    ]


def test_bad_growth_is_flagged_and_bounded_growth_is_not() -> None:
    n = [1000, 10_000, 100_000]
    bad = flags({"x": _rows(n, [0.001 * t**1.5 for t in n], [10, 100, 1000])})
    assert any(line.startswith("x (niah): ingestion time grows super-linear") for line in bad)
    assert any(line.startswith("x (niah): hot set grows linear") for line in bad)
    assert flags({"x": _rows(n, [0.001 * t for t in n], [500, 500, 500])}) == []
    failed = flags({"x": [{"series": "niah", "workload": "w", "error": "timed out"}]})
    assert failed == ["x: w failed: timed out"]


@pytest.mark.slow
def test_quick_in_process_run_measures_every_point() -> None:
    """The fixture at tiny sizes, one arm, in this process (memory figures not fitted)."""
    out = figures(["scale.quick=true", "scale.arms=neuromorphic", "scale.isolate=false"])
    rows = out["points"]["neuromorphic"]
    assert [r["workload"] for r in rows] == [
        "beam-128k-1-p0500",
        "beam-128k-1-p1000",
        "niah-2000-s0",
        "niah-4000-s0",
        "niah-8000-s0",
    ]
    assert all("error" not in r and r["store_bytes"] > 0 and r["ingest_cpu_s"] > 0 for r in rows)
    niah = [r for r in rows if r["series"] == "niah"]
    assert all(r["tokens"] >= size for r, size in zip(niah, (2000, 4000, 8000), strict=True))
    assert all(r["recall_at_10"] is not None for r in rows)
    fit = out["fits"]["neuromorphic"]["niah"]
    xs = [float(r["tokens"]) for r in niah]
    assert fit["store_bytes"]["exponent"] == round(_slope(xs, [r["store_bytes"] for r in niah]), 3)
    assert "ingest_rss_mb" not in fit  # process-wide memory is not a point's own
    assert out["offline"] and out["settings"]["beam"] == str(FIXTURE)


def test_cli_bad_override_is_one_line() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "bench.perf", "scale", "--", "scale.niah=x"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("error: scale.niah=x") and proc.stderr.count("\n") == 1


def test_help_names_the_scale_group() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "bench.perf", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0 and "`scale`" in proc.stdout and "scale.quick=true" in proc.stdout


def test_beam_folder_quick_reads_the_fixture_and_a_missing_folder_is_an_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "beam-100k").mkdir()
    monkeypatch.setenv("BENCH_DATA_DIR", str(tmp_path))
    assert beam_folder(parse_settings([])) == tmp_path / "beam-100k"
    assert beam_folder(parse_settings(["scale.quick=true"])) == FIXTURE
    with pytest.raises(ConfigError, match="no such folder"):
        beam_folder(parse_settings([f"scale.beam={tmp_path / 'nope'}"]))
