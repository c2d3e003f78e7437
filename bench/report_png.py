"""PNG copies of the report's charts, drawn by plotly's kaleido in a headless Chromium.

`python -m bench.report` calls `export_pngs` after writing `report.html`: one
`charts/<name>.png` per chart, all in one browser session (kaleido launches the browser
once for the batch). kaleido finds Chrome/Chromium on the PATH (or `BROWSER_PATH`); with
none, or without kaleido, the export is skipped and the report says so in one line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

CHARTS_DIR = "charts"
"""Folder of the PNGs inside the run directory (not a result: not in the manifest)."""
WIDTH = 1100
"""Pixel width of every PNG, the report page's width; the height is the chart's own."""
DEFAULT_HEIGHT = 450
"""Height of a chart whose layout sets none (plotly.js's own default)."""


def export_pngs(figures: list[tuple[str, Any]], run_dir: Path) -> tuple[list[Path], str | None]:
    """Write `run_dir/charts/<name>.png` for every (name, plotly figure).

    Returns:
        The paths written, and None; or no paths and the one-line reason they were skipped
        (kaleido not installed, no browser).
    """
    if not figures:
        return [], "no charts to export"
    try:
        import kaleido  # noqa: F401 (plotly needs it for images)
        import plotly.io as pio
    except ImportError:
        return [], "kaleido is not installed (pip install 'kaleido>=1.0')"
    out = run_dir / CHARTS_DIR
    out.mkdir(exist_ok=True)
    paths = [out / f"{name}.png" for name, _ in figures]
    try:
        figs = [fig for _, fig in figures]
        heights = [fig.layout.height or DEFAULT_HEIGHT for fig in figs]
        pio.write_images(figs, paths, width=WIDTH, height=heights)
    except RuntimeError as exc:  # kaleido's "requires Google Chrome" (and browser crashes)
        first = next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), "")
        return [], f"no usable Chrome/Chromium ({first or type(exc).__name__}); set BROWSER_PATH"
    return paths, None
