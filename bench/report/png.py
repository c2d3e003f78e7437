"""PNG copies of the report's charts, drawn by kaleido in a headless Chromium.

`python -m bench.report` writes one `charts/<name>.png` per chart, all in one browser
session. Chromium takes seconds to start, about as long as the report spends building its
pages, so the session is opened first (`PngSession`: kaleido's async `Kaleido` in a thread
of its own) and handed the figures when they exist; the browser's start-up then overlaps
the report's other work instead of following it.

The chart page loads plotly.js from the installed plotly and no MathJax: kaleido's default
page fetches MathJax from a CDN, and the charts hold no TeX, so the export sends nothing
off this machine. kaleido finds Chrome/Chromium on the PATH (or `BROWSER_PATH`); with
none, or without kaleido, the export is skipped and the report says so in one line.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kaleido import PageGenerator

CHARTS_DIR = "charts"
"""Folder of the PNGs inside the run directory (not a result: not in the manifest)."""
WIDTH = 1100
"""Pixel width of every PNG, the report page's width; the height is the chart's own."""
DEFAULT_HEIGHT = 450
"""Height of a chart whose layout sets none (plotly.js's own default)."""

Spec = dict[str, Any]
"""One figure for kaleido's `write_fig_from_object`: {"fig", "path", "opts"}."""


def chart_page() -> PageGenerator:
    """The page kaleido draws charts in: the installed plotly.js, MathJax off (no CDN)."""
    from kaleido import PageGenerator

    return PageGenerator(mathjax=False)


def _specs(figures: list[tuple[str, Any]], out: Path) -> list[Spec]:
    """One spec per (name, plotly figure): `out/<name>.png`, WIDTH wide, the chart's height."""
    return [
        {
            "fig": fig.to_dict(),
            "path": str(out / f"{name}.png"),
            "opts": {
                "format": "png",
                "width": WIDTH,
                "height": fig.layout.height or DEFAULT_HEIGHT,
                "scale": 1,
            },
        }
        for name, fig in figures
    ]


QUIET_LOGGERS = ("kaleido", "choreographer", "logistro")
"""Loggers of the PNG export kept to warnings: each logs every browser step at INFO."""


class PngSession:
    """A browser session opened on entry; `write` draws the charts in it.

    The browser starts in a background thread. A browser that fails to start ends that
    thread with its error, which `write` returns as the skip reason, so nothing ever waits
    on a dead session; leaving the block without `write` (an error while building the
    report) closes the browser unused.
    """

    def __init__(self) -> None:
        for chatty in QUIET_LOGGERS:  # ~50 INFO lines per export under a run's INFO logging
            logging.getLogger(chatty).setLevel(logging.WARNING)
        self._jobs: queue.Queue[list[Spec] | None] = queue.Queue(maxsize=1)
        self._thread = threading.Thread(target=self._serve, name="png-export", daemon=True)
        self._error: BaseException | None = None
        self._handed_over = False

    def __enter__(self) -> PngSession:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._hand_over(None)
        self._thread.join()

    def write(self, figures: list[tuple[str, Any]], run_dir: Path) -> tuple[list[Path], str | None]:
        """Write `run_dir/charts/<name>.png` for every (name, plotly figure).

        Returns:
            The paths written, and None; or no paths and the one-line reason they were
            skipped (kaleido not installed, no usable browser, a chart kaleido could not draw).
        """
        if not figures:
            self._hand_over(None)
            return [], "no charts to export"
        out = run_dir / CHARTS_DIR
        out.mkdir(exist_ok=True)
        self._hand_over(_specs(figures, out))
        self._thread.join()
        if self._error is None:
            return [out / f"{name}.png" for name, _ in figures], None
        return [], _reason(self._error)

    def _hand_over(self, specs: list[Spec] | None) -> None:
        """Give the session its one job (None: close unused); later calls do nothing."""
        if not self._handed_over:
            self._handed_over = True
            self._jobs.put(specs)

    def _serve(self) -> None:
        """Thread body: the whole session; its error is kept for `write` to report."""
        try:
            asyncio.run(self._session())
        except Exception as exc:  # noqa: BLE001 (kept and reported by `write`)
            self._error = exc

    async def _session(self) -> None:
        """Start the browser, wait for the figures, draw them; close the browser."""
        import kaleido

        async with kaleido.Kaleido(page_generator=chart_page()) as browser:
            specs = await asyncio.to_thread(self._jobs.get)
            if specs:
                await browser.write_fig_from_object(specs, cancel_on_error=True)


def _reason(exc: BaseException) -> str:
    """The one-line skip reason for an export that failed with `exc`; any other error raises.

    kaleido missing, no usable browser (kaleido's "requires Google Chrome", a browser
    that fails or crashes: RuntimeError) and a chart plotly.js refused (KaleidoError) skip
    the PNGs; anything else is a bug here and is not turned into a note.
    """
    if isinstance(exc, ImportError):
        return "kaleido is not installed (pip install 'kaleido>=1.5')"
    from kaleido.errors import KaleidoError

    first = next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), "")
    if isinstance(exc, RuntimeError):
        return f"no usable Chrome/Chromium ({first or type(exc).__name__}); set BROWSER_PATH"
    if isinstance(exc, KaleidoError):
        return f"kaleido could not draw the charts ({first or type(exc).__name__})"
    raise exc


def export_pngs(figures: list[tuple[str, Any]], run_dir: Path) -> tuple[list[Path], str | None]:
    """`PngSession.write` in a session of its own (for callers with nothing to overlap)."""
    with PngSession() as session:
        return session.write(figures, run_dir)
