"""Resuming a finished run decides "nothing pending" from the records alone (issue 15).

Checked by what a fresh interpreter has imported after the resume: a run that built its
providers (WordLlama, the offline answerer's nltk) or opened its arms (LanceDB) would
have them in `sys.modules`. A record with an arm in `error` is still redone.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.e2e_support import ROOT, load_records, run_cli, strip_timings

SMOKE = ("dataset=smoke", "arms=[raw,rag]", "progress=false", "heartbeat_s=0")
HEAVY = ("wordllama", "lancedb", "nltk", "tokenizers")
_RESUME = """
import json, runpy, sys
sys.argv = ["bench.run", *json.loads(sys.argv[1])]
try:
    runpy.run_module("bench.run", run_name="__main__")
except SystemExit as exc:
    assert not exc.code, exc.code
print(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)))
"""


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("fast") / "run"
    done = run_cli(*SMOKE, f"out={out}")
    assert done.returncode == 0, done.stderr[-2000:]
    return out


def _resume_imports(out: Path) -> list[str]:
    args = json.dumps([*SMOKE, f"out={out}"])
    code = _RESUME.format(heavy=HEAVY)
    done = subprocess.run(
        [sys.executable, "-c", code, args], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "0 records written" in done.stderr
    imported: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return imported


def test_resume_of_a_finished_run_builds_no_provider_or_arm(finished: Path) -> None:
    assert _resume_imports(finished) == []


def test_an_arm_in_error_is_still_redone(finished: Path, tmp_path: Path) -> None:
    import shutil

    out = tmp_path / "run"
    shutil.copytree(finished, out)
    path = sorted((out / "questions").glob("*.json"))[0]
    record = json.loads(path.read_text())
    record["arms"]["rag"] = {"status": "error", "error": "made up for the test"}
    path.write_text(json.dumps(record))
    done = run_cli(*SMOKE, f"out={out}")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "1 records written" in done.stderr
    again, before = load_records(out), load_records(finished)
    assert {q: strip_timings(r) for q, r in again.items()} == {
        q: strip_timings(r) for q, r in before.items()
    }


def test_report_outputs_are_current_only_when_newer_than_every_input(tmp_path: Path) -> None:
    import os

    from bench.run.resume import REPORT_OUTPUTS, report_current

    (tmp_path / "questions").mkdir()
    inputs = [tmp_path / "run.json", tmp_path / "questions" / "q1.json"]
    for path in inputs:
        path.write_text("{}")
        os.utime(path, ns=(1_000, 1_000))
    assert not report_current(tmp_path)  # no outputs yet
    for name in REPORT_OUTPUTS:
        (tmp_path / name).write_text("x")
        os.utime(tmp_path / name, ns=(2_000, 2_000))
    assert report_current(tmp_path)
    os.utime(inputs[1], ns=(3_000, 3_000))  # a record rewritten after the report
    assert not report_current(tmp_path)
    os.utime(inputs[1], ns=(1_000, 1_000))
    (tmp_path / "explorer.html").unlink()
    assert not report_current(tmp_path)


@pytest.mark.slow
def test_a_finished_report_run_keeps_its_outputs_and_still_verifies(tmp_path: Path) -> None:
    from bench.run.resume import REPORT_OUTPUTS

    out = tmp_path / "run"
    args = ("dataset=smoke", "arms=[raw]", f"out={out}", "progress=false", "report=true")
    assert run_cli(*args).returncode == 0
    before = {name: (out / name).stat().st_mtime_ns for name in REPORT_OUTPUTS}
    again = run_cli(*args)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "up to date" in again.stderr
    assert {name: (out / name).stat().st_mtime_ns for name in REPORT_OUTPUTS} == before
    assert run_cli(str(out), module="bench.verify").returncode == 0
