"""analysis/locomo.ipynb runs headless (nbclient) against a small run, and skips without one."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest
from IPython.display import display
from nbclient import NotebookClient

from bench.paths import PROJECT_ROOT
from tests.report.test_frame import make_run, snapshot

NOTEBOOK = PROJECT_ROOT / "analysis" / "locomo.ipynb"
TIMEOUT_S = 120
KERNEL = "armbench-test"


def _pin_kernel(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A kernelspec running this very interpreter, ahead of any user-level `python3` spec."""
    spec = root / "jupyter" / "kernels" / KERNEL
    spec.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    kernel = {"argv": argv, "display_name": KERNEL, "language": "python"}
    (spec / "kernel.json").write_text(json.dumps(kernel), encoding="utf-8")
    monkeypatch.setenv("JUPYTER_PATH", str(root / "jupyter"))


def _streams(nb: Any, name: str) -> str:
    return "".join(
        out.get("text", "")
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
        if out.get("output_type") == "stream" and out.get("name") == name
    )


def test_committed_notebook_has_no_outputs() -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(not c.outputs and c.execution_count is None for c in code)


def _execute(run_dir: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Run every cell against `run_dir` in a fresh kernel; raise if any cell fails."""
    monkeypatch.setenv("ARMBENCH_RUN", str(run_dir))
    _pin_kernel(workdir, monkeypatch)
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = NotebookClient(
        nb, timeout=TIMEOUT_S, kernel_name=KERNEL, resources={"metadata": {"path": workdir}}
    )
    client.execute()  # raises CellExecutionError if any cell (or one of its asserts) fails
    return nb


@pytest.mark.slow
def test_notebook_runs_on_a_run_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_dir = make_run(tmp_path)
    before = snapshot(run_dir)
    nb = _execute(run_dir, tmp_path, monkeypatch)
    stdout = _streams(nb, "stdout")
    assert f"run: {run_dir}" in stdout
    assert "McNemar p matches the summariser" in stdout
    assert "GEE fitted beside the clustered test" in stdout and "clustered p = " in stdout
    assert "figures drawn: accuracy, categories, pairs, tokens, efficiency, latency" in stdout
    plots = [
        out["data"]["application/vnd.plotly.v1+json"]
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
        if "application/vnd.plotly.v1+json" in out.get("data", {})
    ]
    assert len(plots) == 6 and plots[0]["layout"]["yaxis"]["range"][0] == 0  # axes from 0
    if shutil.which("chromium") or shutil.which("chromium-browser"):  # kaleido can draw
        pngs = [
            out["data"]["image/png"]
            for cell in nb.cells
            if cell.cell_type == "code"
            for out in cell.get("outputs", [])
            if "application/vnd.plotly.v1+json" in out.get("data", {})
            and "image/png" in out["data"]
        ]
        assert len(pngs) == 6  # a static preview (GitHub, nbviewer) shows every figure
    assert _streams(nb, "stderr") == ""  # no warnings (deprecations included)
    assert snapshot(run_dir) == before  # reading never mutates the run


@pytest.mark.slow
def test_notebook_runs_on_committed_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CI: the notebook against every committed run under results/ (skipped when none)."""
    runs = sorted(p.parent for p in (PROJECT_ROOT / "results").glob("*/questions"))
    if not runs:
        pytest.skip("no committed run under results/")
    for run_dir in runs:
        nb = _execute(run_dir, tmp_path / run_dir.name, monkeypatch)
        assert "McNemar p matches the summariser" in _streams(nb, "stdout") or (
            "only one arm" in _streams(nb, "stdout")
        )


def test_notebook_skips_without_a_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The skip path, run in-process (no kernel needed): every cell passes, nothing is loaded."""
    monkeypatch.delenv("ARMBENCH_RUN", raising=False)
    monkeypatch.setenv("ARMBENCH_RESULTS", str(tmp_path / "results"))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    namespace: dict[str, Any] = {"display": display, "__name__": "__main__"}
    for cell in nb.cells:
        if cell.cell_type == "code":
            exec(compile(cell.source, "<notebook cell>", "exec"), namespace)
    assert namespace["HAVE_RUN"] is False
    assert "no run found" in capsys.readouterr().out
    assert "df" not in namespace and "summary" not in namespace


def test_notebook_finds_the_first_run_under_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ARMBENCH_RUN", raising=False)
    results = tmp_path / "results"
    for name in ("b-run", "a-run"):
        (results / name / "questions").mkdir(parents=True)
    (results / "not-a-run").mkdir()
    monkeypatch.setenv("ARMBENCH_RESULTS", str(results))
    first = next(c for c in nbformat.read(NOTEBOOK, as_version=4).cells if c.cell_type == "code")
    namespace: dict[str, Any] = {"__name__": "__main__"}
    exec(compile(first.source, "<notebook cell>", "exec"), namespace)
    assert namespace["RUN"] == results / "a-run"
    (results / "smoke-offline" / "questions").mkdir(parents=True)
    assert namespace["find_run"]() == results / "smoke-offline"


@pytest.mark.slow
def test_relative_armbench_run_is_read_from_the_repo_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kernel runs elsewhere (here tmp_path), yet `results/...` names the repo's run."""
    relative = Path("results") / "smoke-offline-v0.1.0"
    nb = _execute(relative, tmp_path, monkeypatch)
    assert f"run: {PROJECT_ROOT / relative}" in _streams(nb, "stdout")
