"""board.html in headless Chromium, offline: rows sort on a header click, and a screenshot.

Skipped (with the reason) when no `chromium` binary is on the PATH. Network is made
impossible (every host resolves to nothing, every request goes to a dead local proxy),
so the page works from the file alone.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from bench.board.cli import main
from tests.summarise.test_claims import build

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium binary on PATH")
OFFLINE_FLAGS = [
    "--headless",
    "--disable-gpu",
    "--no-sandbox",
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--proxy-server=127.0.0.1:9",
    "--virtual-time-budget=5000",
]


def chromium(page: Path, profile: Path, *args: str) -> str:
    """Chromium's stdout for a file:// page, offline."""
    assert CHROMIUM is not None
    proc = subprocess.run(
        [CHROMIUM, *OFFLINE_FLAGS, f"--user-data-dir={profile}", *args, page.resolve().as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A board of two runs: one group of four entries, accuracies 100%, 100%, 66.6%, 66.6%."""
    root = tmp_path_factory.mktemp("board")
    lenient = build(root, {"where": "lenient", "accept_all": True})
    clean = build(root, {"where": "clean"})
    assert main([str(lenient), str(clean), "--out", str(root / "out")]) == 0
    return root / "out" / "board.html"


def _arms_in_order(dom: str) -> list[str]:
    rows = re.findall(r"<tr><td[^>]*>\d+</td><td[^>]*>(\w+)</td><td[^>]*>(\w+)</td>", dom)
    return [f"{run}/{arm}" for run, arm in rows]


@pytest.mark.slow
def test_a_header_click_sorts_the_rows_without_a_server(board: Path, tmp_path: Path) -> None:
    dom = chromium(board, tmp_path / "p1", "--dump-dom")
    assert _arms_in_order(dom)[:2] == ["lenient/mem", "lenient/rag"]  # ranked: top first
    clicked = tmp_path / "clicked.html"  # the same page, its accuracy header clicked once
    script = "<script>document.querySelectorAll('table.board th')[3].click();</script>"
    clicked.write_text(board.read_text().replace("</body>", script + "</body>"))
    dom = chromium(clicked, tmp_path / "p2", "--dump-dom")
    assert _arms_in_order(dom)[:2] == ["clean/mem", "clean/rag"]  # ascending accuracy
    assert 'data-dir="up"' in dom


@pytest.mark.slow
def test_the_page_renders_to_a_screenshot(board: Path, tmp_path: Path) -> None:
    shot = tmp_path / "board.png"
    chromium(board, tmp_path / "p3", f"--screenshot={shot}", "--window-size=1400,700")
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
