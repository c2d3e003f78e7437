"""report.html and explorer.html in headless Chromium: no network, no console errors;
the charts exported as PNGs (kaleido drives the same Chromium).

Skipped (with the reason) when no `chromium` binary is on the PATH; `.ci/run` installs
the Debian package when it can. Network is made impossible (every host resolves to
nothing, every request goes to a dead local proxy), so a page that needed the network
would render empty and fail the DOM checks below.
"""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
from pathlib import Path

import plotly.graph_objects as go
import pytest

from bench.report import page as report
from bench.report.png import CHARTS_DIR, DEFAULT_HEIGHT, WIDTH, PngSession, export_pngs
from tests.report.test_frame import N_QUESTIONS, make_run

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium binary on PATH")
_CONSOLE_ERROR = re.compile(r"Uncaught|ERROR:CONSOLE|:CONSOLE\(\d+\)\] \"(?:Error|TypeError)")
_REMOTE = re.compile(r"""<(script|link|img|iframe)[^>]*\b(src|href)=["']?https?:""", re.I)


def _dump_dom(page: Path, profile: Path) -> tuple[str, str]:
    """(DOM after scripts ran, Chromium's stderr log) of a file:// page, offline."""
    assert CHROMIUM is not None
    proc = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--disable-gpu",
            "--no-sandbox",
            "--enable-logging=stderr",
            "--v=0",
            f"--user-data-dir={profile}",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--proxy-server=127.0.0.1:9",
            "--virtual-time-budget=10000",
            "--dump-dom",
            page.resolve().as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout, proc.stderr


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = make_run(tmp_path_factory.mktemp("browser"))
    assert report.main([str(run)]) == 0
    return run


def test_console_errors_are_detected(tmp_path: Path) -> None:
    """Control: the check below fails on a page whose script throws."""
    page = tmp_path / "broken.html"
    page.write_text("<html><body><script>undefinedThing.x()</script></body></html>", "utf-8")
    _, log = _dump_dom(page, tmp_path / "profile")
    assert _CONSOLE_ERROR.search(log), log[-2000:]


@pytest.mark.slow
def test_report_renders_offline_without_console_errors(run_dir: Path, tmp_path: Path) -> None:
    page = run_dir / "report.html"
    assert not _REMOTE.search(page.read_text(encoding="utf-8"))
    dom, log = _dump_dom(page, tmp_path / "profile")
    assert not _CONSOLE_ERROR.search(log), log[-2000:]
    for div in ("fig-accuracy", "fig-pairs", "fig-tokens", "fig-efficiency"):
        assert f'id="{div}"' in dom
    assert dom.count('class="main-svg"') >= 5  # plotly.js ran and drew the charts


def test_explorer_renders_offline_without_console_errors(run_dir: Path, tmp_path: Path) -> None:
    page = run_dir / "explorer.html"
    assert not _REMOTE.search(page.read_text(encoding="utf-8"))
    dom, log = _dump_dom(page, tmp_path / "profile")
    assert not _CONSOLE_ERROR.search(log), log[-2000:]
    assert f"{N_QUESTIONS} of {N_QUESTIONS} questions" in dom  # the script ran the filters
    assert 'class="row sel"' in dom  # and selected the first question
    assert "conv-1:0 — " in dom  # whose detail pane it drew


def _png_size(path: Path) -> tuple[int, int]:
    """(width, height) from a PNG's IHDR chunk."""
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", path
    return struct.unpack(">II", head[16:24])


def test_report_exports_a_png_per_chart(run_dir: Path, tmp_path: Path) -> None:
    charts = run_dir / CHARTS_DIR
    names = sorted(p.stem for p in charts.glob("*.png"))
    expected = ["accuracy", "categories", "pairs", "tokens", "efficiency", "speed", "latency"]
    assert names == sorted(expected)
    blank, skipped = export_pngs([("blank", go.Figure(layout={"height": 420}))], tmp_path)
    assert skipped is None
    heights = {name: fig.layout.height for name, fig in report._build(run_dir, "official")[1]}
    for name in names:
        png = charts / f"{name}.png"
        assert _png_size(png) == (WIDTH, heights[name])  # the page's width, the chart's height
        # a drawn chart compresses far worse than empty axes of the same size
        assert png.stat().st_size > 1.5 * blank[0].stat().st_size, name


@pytest.mark.slow
def test_a_session_left_unused_closes_its_browser(tmp_path: Path) -> None:
    """An error while the report is built leaves the block at once, with no PNG written."""
    with pytest.raises(ValueError, match="build failed"), PngSession():
        raise ValueError("build failed")
    with PngSession() as session:
        written, skipped = session.write([("blank", go.Figure())], tmp_path)
    assert skipped is None and [p.name for p in written] == ["blank.png"]
    assert _png_size(written[0]) == (WIDTH, DEFAULT_HEIGHT)  # no height in the layout


def test_the_png_export_adds_no_info_lines_under_a_runs_logging(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """kaleido and choreographer logged ~50 INFO lines after every summary (issue 41)."""
    import logging

    caplog.set_level(logging.INFO)  # what a run's job logging lets through
    _, skipped = export_pngs([("blank", go.Figure(layout={"height": 420}))], tmp_path)
    assert skipped is None
    quiet = ("kaleido", "choreographer")
    assert [r.name for r in caplog.records if r.name.split(".")[0] in quiet] == []
