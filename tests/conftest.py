"""Fixtures shared by every test folder: offline smoke runs made once per session.

Each `smoke_*` fixture is one `python -m bench.run` on the smoke fixture, made the first
time a test asks for it and then shared by every test that asks again (the runs take
seconds each, and several folders read the same one). A shared run is read-only: a test
that changes anything in it (a record, run.json, a rerun into it) works on `copy_run(run)`.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.e2e_support import SMOKE_ALL, SMOKE_RAW, SMOKE_RAW_RAG, run_cli


def _smoke(factory: pytest.TempPathFactory, name: str, overrides: tuple[str, ...]) -> Path:
    out = factory.mktemp(name) / "run"
    proc = run_cli(*overrides, f"out={out}")
    assert proc.returncode == 0, proc.stderr[-2000:]
    return out


@pytest.fixture(scope="session")
def smoke_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`python -m bench.run dataset=smoke progress=false`: every default arm (read-only)."""
    return _smoke(tmp_path_factory, "smoke-all", SMOKE_ALL)


@pytest.fixture(scope="session")
def smoke_raw_rag_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`python -m bench.run dataset=smoke arms=[raw,rag] progress=false` (read-only)."""
    return _smoke(tmp_path_factory, "smoke-raw-rag", SMOKE_RAW_RAG)


@pytest.fixture(scope="session")
def smoke_raw_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`python -m bench.run dataset=smoke arms=[raw] progress=false` (read-only)."""
    return _smoke(tmp_path_factory, "smoke-raw", SMOKE_RAW)


@pytest.fixture
def copy_run(tmp_path: Path) -> Callable[[Path], Path]:
    """A function copying a run directory into this test's tmp_path (a folder per call)."""
    made: list[Path] = []

    def copy(run: Path) -> Path:
        dest = tmp_path / f"run-copy-{len(made)}"
        shutil.copytree(run, dest)
        made.append(dest)
        return dest

    return copy
