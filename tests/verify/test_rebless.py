"""A record edited by hand is never re-blessed by re-running `bench.run` (issue 40, 11).

The harness journals the hash of every record it writes (bench/verify/journal.py); a
session that would rewrite the manifest over a record whose content it never wrote
refuses in one line, and `bench.verify` keeps reporting the edit.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bench.verify.check import verify_run
from bench.verify.files import MANIFEST
from tests.support.e2e_support import last_line, run_cli

RUN = ("dataset=smoke", "progress=false", "report=false")


@pytest.mark.slow  # four offline smoke sessions (~15 s)
def test_a_tampered_record_is_not_reblessed_by_a_rerun(tmp_path: Path) -> None:
    out = tmp_path / "run"
    first = run_cli(*RUN, f"out={out}", "arms=[raw]")
    assert first.returncode == 0, first.stderr[-2000:]
    record = sorted((out / "questions").glob("*.json"))[0]
    data = json.loads(record.read_text())
    data["arms"]["raw"]["answer"], data["arms"]["raw"]["correct"] = "forged", True
    record.write_text(json.dumps(data, indent=1) + "\n")
    manifest = (out / MANIFEST).read_bytes()

    again = run_cli(*RUN, f"out={out}", "arms=[raw]")
    assert again.returncode == 2 and "Traceback" not in again.stderr
    line = last_line(again.stderr)
    assert line.startswith(
        f"error: {record}: changed since MANIFEST.json was written, and not by the harness"
    )
    assert (out / MANIFEST).read_bytes() == manifest  # not re-blessed
    assert f"changed questions/{record.name}" in verify_run(out).lines()

    accepted = run_cli("--write", str(out), module="bench.verify")  # a knowing acceptance
    assert accepted.returncode == 0, accepted.stderr
    assert run_cli(*RUN, f"out={out}", "arms=[raw]").returncode == 0


@pytest.mark.slow  # three offline smoke sessions (~12 s)
def test_records_the_harness_rewrote_after_the_manifest_still_refresh_it(tmp_path: Path) -> None:
    """A session killed after rewriting records but before its manifest: not a tamper."""
    out = tmp_path / "run"
    assert run_cli(*RUN, f"out={out}", "arms=[raw]").returncode == 0
    old = tmp_path / "old-manifest.json"
    shutil.copy2(out / MANIFEST, old)
    widened = run_cli(*RUN, f"out={out}", "arms=[raw,rag]")  # rewrites every record
    assert widened.returncode == 0, widened.stderr[-2000:]
    shutil.copy2(old, out / MANIFEST)  # as if that session died before its manifest
    resumed = run_cli(*RUN, f"out={out}", "arms=[raw,rag]")
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert verify_run(out).ok
