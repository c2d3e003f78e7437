"""`python -m bench.perf lme`: settings checked first, records compared without timings.

- a missing subset file, a bad `lme.repeats` or a baseline that is no checkout is a
  one-line error (exit 2) before anything runs;
- two runs' records count as differing only where more than timings and provenance
  differ, or where a question file is in one run only;
- (slow) the measurement of a two-question run reports wall, CPU, peak memory, records.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.perf.lme import comparable, differing, figures
from tests.support.e2e_support import ROOT

DATA = Path(os.environ.get("BENCH_DATA_DIR", "/work/shared/data"), "longmemeval-s-subset16.json")


@pytest.mark.parametrize(
    ("override", "message"),
    [
        (
            "lme.path=/nonexistent/lme.json",
            "error: bench.perf lme: /nonexistent/lme.json not found",
        ),
        ("lme.repeats=0", "error: lme.repeats=0: expected a whole number, >= 1"),
        ("lme.baseline=/tmp", "error: lme.baseline=/tmp: not an armbench checkout"),
    ],
)
def test_bad_settings_are_one_line_errors(override: str, message: str, tmp_path: Path) -> None:
    subset = tmp_path / "lme.json"
    subset.write_text("[]")
    args = [f"lme.path={subset}", override] if "lme.path" not in override else [override]
    proc = subprocess.run(
        [sys.executable, "-m", "bench.perf", "lme", "--", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    line = proc.stderr.strip()
    assert line.startswith(message) and "\n" not in line


def _record(qid: str, answer: str, latency: float) -> dict[str, object]:
    return {
        "question_id": qid,
        "provenance": {"run": str(latency)},
        "arms": {"rag": {"answer": answer, "latency_ms": latency, "retrieve_ms": latency}},
    }


def test_records_differ_only_beyond_timings_and_provenance(tmp_path: Path) -> None:
    for run, answers in (("a", ["x", "y", "z"]), ("b", ["x", "y", "changed"])):
        folder = tmp_path / run / "questions"
        folder.mkdir(parents=True)
        for i, answer in enumerate(answers):
            record = _record(f"q{i}", answer, latency=len(run) * 10.0 + i + ord(run[0]))
            (folder / f"q{i}.json").write_text(json.dumps(record))
    (tmp_path / "b" / "questions" / "q9.json").write_text(json.dumps(_record("q9", "x", 1.0)))
    assert comparable(_record("q0", "x", 1.0)) == comparable(_record("q0", "x", 2.0))
    assert differing(tmp_path / "a", tmp_path / "b") == 2  # q2's answer, q9 only in b
    assert differing(tmp_path / "a", tmp_path / "a") == 0


@pytest.mark.slow
@pytest.mark.skipif(not DATA.is_file(), reason="needs the LongMemEval subset in BENCH_DATA_DIR")
def test_a_small_run_is_measured() -> None:
    got = figures([f"lme.path={DATA}", "limit.conversations=2", "arms=[raw,rag]"])
    assert got["this"]["records"] == 2 and got["this"]["runs"] == 1
    assert got["this"]["wall_s"] > 0 and got["this"]["peak_rss_mib"] > 50
