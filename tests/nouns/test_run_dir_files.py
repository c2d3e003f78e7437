"""Only regular files are read from a run directory, by every command (issue 29 items 7, 8).

A `questions/*.json` that is a symlink to `/dev/zero`, a FIFO or a huge file used to make
`bench.summarise` read until the kernel killed it, hang, or count a record `bench.verify`
skipped. Each now ends in one line (summarise, exit 2) or a reported problem (verify).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from bench.files import MAX_RECORD_BYTES, read_file_bytes
from bench.verify.check import UNSIGNED_NOTE, verify_run
from tests.support.e2e_support import ROOT, last_line, run_cli

SMOKE = ROOT / "results" / "smoke-offline-v0.3.0"


@pytest.fixture
def run_copy(tmp_path: Path) -> Path:
    """A copy of the committed smoke run (manifest included)."""
    target = tmp_path / "run"
    shutil.copytree(SMOKE, target)
    return target


def plant(run_dir: Path, kind: str, outside: Path) -> Path:
    """A `questions/zz.json` that is not a plain record: symlink, fifo, zero or big."""
    path = run_dir / "questions" / "zz.json"
    if kind == "zero":
        path.symlink_to("/dev/zero")
    elif kind == "symlink":
        records = sorted((run_dir / "questions").glob("*.json"))
        body = records[0].read_bytes() if records else b"{}"
        target = outside / "record.json"
        target.write_bytes(body.replace(b'"question_id": "', b'"question_id": "x'))
        path.symlink_to(target)
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        with path.open("wb") as handle:  # sparse: no disk used
            handle.truncate(MAX_RECORD_BYTES + 1)
    return path


@pytest.mark.parametrize("kind", ["zero", "symlink", "fifo", "big"])
def test_read_file_bytes_reads_only_regular_files(tmp_path: Path, kind: str) -> None:
    (tmp_path / "questions").mkdir()
    path = plant(tmp_path, kind, tmp_path)
    with pytest.raises(OSError, match="symbolic link|not a regular file|larger than"):
        read_file_bytes(str(path))


def test_a_device_is_not_read() -> None:
    with pytest.raises(OSError, match="not a regular file"):
        read_file_bytes("/dev/zero")


@pytest.mark.parametrize("kind", ["zero", "symlink", "fifo", "big"])
def test_summarise_refuses_what_is_not_a_regular_file(
    run_copy: Path, tmp_path: Path, kind: str
) -> None:
    plant(run_copy, kind, tmp_path)
    done = run_cli(str(run_copy), module="bench.summarise", timeout=60)
    assert done.returncode == 2, done.stderr[-1000:]
    line = last_line(done.stderr)
    assert line.startswith("error: ") and "zz.json" in line
    assert "symbolic link" in line or "not a regular file" in line or "larger than" in line
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("kind", ["zero", "symlink", "fifo"])
def test_verify_reports_what_is_not_a_regular_file(
    run_copy: Path, tmp_path: Path, kind: str
) -> None:
    plant(run_copy, kind, tmp_path)
    verdict = verify_run(run_copy)
    assert not verdict.ok
    assert any(p.startswith("refused questions/zz.json") for p in verdict.problems)


def test_verify_says_what_an_unsigned_check_proves(run_copy: Path) -> None:
    done = run_cli(str(run_copy), module="bench.verify", timeout=60)
    assert done.returncode == 0, done.stderr
    line = last_line(done.stdout)  # the committed run carries SUMMARY.md: derived, not checked
    assert (
        line == f"ok {run_copy}: 17 files unchanged; 1 derived files not checked; {UNSIGNED_NOTE}"
    )
    assert "against accidental change only" in UNSIGNED_NOTE


def test_a_symlinked_run_json_is_not_read(run_copy: Path, tmp_path: Path) -> None:
    from bench.runmeta import read_run_meta

    elsewhere = tmp_path / "other.json"
    elsewhere.write_bytes((run_copy / "run.json").read_bytes())
    (run_copy / "run.json").unlink()
    (run_copy / "run.json").symlink_to(elsewhere)
    meta, notes = read_run_meta(run_copy / "run.json")
    assert meta is None and "symbolic link" in notes[0]
