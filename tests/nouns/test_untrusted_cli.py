"""`bench.run` and `bench.suite` as a user runs them, on hostile and out-of-scope input.

Slow (each starts Hydra in a fresh process): `make test-slow`. The in-process readers
and the other commands are covered fast by tests/nouns/test_untrusted.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.nouns.test_untrusted import CORPUS, plant
from tests.support.e2e_support import last_line, run_cli

SMOKE_SUITE = "suite.path=datasets/fixtures/suites/smoke.json"


def _one_error_line(proc: object) -> str:
    stderr: str = getattr(proc, "stderr")  # noqa: B009 - a CompletedProcess
    assert getattr(proc, "returncode") == 2, stderr[-2000:]  # noqa: B009
    assert "Traceback" not in stderr, stderr[-2000:]
    line = last_line(stderr)
    assert line.startswith("error: "), stderr[-2000:]
    return line


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CORPUS))
def test_a_hostile_dataset_file_is_one_line_to_bench_run(tmp_path: Path, case: str) -> None:
    data = plant(tmp_path / "data.json", case)
    out = tmp_path / "out"
    proc = run_cli(
        "dataset=smoke",
        f"dataset.path={data}",
        "dataset.sha256=null",
        "arms=[raw]",
        "progress=false",
        f"out={out}",
    )
    assert str(data) in _one_error_line(proc)
    assert not (out / "questions").exists() or not any((out / "questions").iterdir())


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CORPUS))
def test_a_hostile_suite_file_is_one_line_to_bench_suite(tmp_path: Path, case: str) -> None:
    suite = plant(tmp_path / "suite.json", case)
    out = tmp_path / "out"
    proc = run_cli(f"suite.path={suite}", "progress=false", f"out={out}", module="bench.suite")
    assert str(suite) in _one_error_line(proc)
    assert not (out / "report.json").exists()


@pytest.mark.slow
def test_an_empty_suite_is_refused(tmp_path: Path) -> None:
    suite = tmp_path / "empty.json"
    suite.write_text('{"name": "e", "kind": "k", "version": 1, "memories": [], "queries": []}')
    proc = run_cli(
        f"suite.path={suite}", "progress=false", f"out={tmp_path / 'out'}", module="bench.suite"
    )
    assert "$.queries is empty" in _one_error_line(proc)


@pytest.mark.slow
def test_the_bucket_root_is_refused_by_bench_run(tmp_path: Path) -> None:
    proc = run_cli("dataset=smoke", "arms=[raw]", "progress=false", "out=s3://some-bucket")
    assert "the bucket root holds other runs" in _one_error_line(proc)


@pytest.mark.slow
def test_swapped_suite_predictions_are_refused_by_evaluate(tmp_path: Path) -> None:
    out = tmp_path / "out"
    base = (SMOKE_SUITE, "arms=[rag]", "progress=false", f"out={out}")
    assert run_cli(*base, "phase=predict", module="bench.suite").returncode == 0
    folder = next((out / "suites").iterdir()) / "predictions"
    one, two = sorted(folder.glob("*.json"))[:2]
    swap = one.with_suffix(".swap")
    one.rename(swap), two.rename(one), swap.rename(two)
    line = _one_error_line(run_cli(*base, "phase=evaluate", module="bench.suite"))
    assert "prediction for question" in line and "re-run phase=predict" in line
