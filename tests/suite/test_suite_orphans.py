"""A killed suite's temp files are removed by the next suite run (issue 40, item 12).

`write_text_atomic` names its temp file `.<name>.<pid>.<random>.tmp`; a suite killed
while writing a store left one that nothing removed. The next `python -m bench.suite`
on the same `out` removes those whose writer no longer runs, and nothing else.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.files import orphaned_temp
from tests.support.e2e_support import run_cli

SMOKE = "suite.path=datasets/fixtures/suites/smoke.json"


def _dead_pid() -> int:
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(child.stdout)


def test_only_a_dead_writers_temp_file_is_an_orphan(tmp_path: Path) -> None:
    dead, live = _dead_pid(), os.getpid()
    names = {
        f".checkpoint.json.{dead}.k1ll3d.tmp": True,
        f".checkpoint.json.{live}.l1v3.tmp": False,
        ".checkpoint.json.k1ll3d.tmp": False,
        f"checkpoint.json.{dead}.x.tmp": False,
    }
    for name, orphan in names.items():
        (tmp_path / name).write_text("{}")
        assert orphaned_temp(tmp_path / name) is orphan, name
    (tmp_path / "link.0.x.tmp").symlink_to(tmp_path / f".checkpoint.json.{dead}.k1ll3d.tmp")
    assert not orphaned_temp(tmp_path / "link.0.x.tmp")


@pytest.mark.slow
def test_the_next_suite_run_removes_a_killed_suites_temp_files(tmp_path: Path) -> None:
    out = tmp_path / "suite"
    first = run_cli(SMOKE, "progress=false", "arms=[rag]", f"out={out}", module="bench.suite")
    assert first.returncode == 0, first.stderr[-2000:]
    store = next(p.parent for p in (out / "stores").rglob("*.json"))
    dead = store / f".checkpoint.json.{_dead_pid()}.k1ll3d.tmp"  # as a killed suite leaves it
    live = store / f".checkpoint.json.{os.getpid()}.l1v3.tmp"  # a writer still running
    for path in (dead, live):
        path.write_text('{"half": ')
    again = run_cli(SMOKE, "progress=false", "arms=[rag]", f"out={out}", module="bench.suite")
    assert again.returncode == 0, again.stderr[-2000:]
    assert not dead.exists() and live.exists()
