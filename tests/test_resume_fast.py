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

from tests.e2e_support import ROOT, load_records, run_cli, strip_timings

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
