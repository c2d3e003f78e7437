"""`python -m bench.report RUN_DIR`: a self-contained Plotly `report.html` for one run.

Every number comes from the summariser's typed `Summary` (`bench.summarise`): accuracy
with Wilson 95% intervals on both denominators, per category, paired discordance with
the exact McNemar p, context tokens and latency. The per-answer distribution of
context tokens comes from `bench.report.frame.load_run`. plotly.js is inlined, so the file
opens offline. `SUMMARY.md` is written by the summariser when it is absent.

Exit status: 0 on success, 2 with a one-line message when RUN_DIR is not a run.
"""

from __future__ import annotations

import argparse
import html
import sys
from contextlib import nullcontext
from pathlib import Path

import plotly.graph_objects as go

from bench import summarise
from bench.cli_errors import one_line_errors
from bench.errors import BenchError
from bench.report import figures as charts
from bench.report.budget_report import budget_figure, budget_table, coverage_table
from bench.report.errata import errata_html
from bench.report.explorer import write_explorer
from bench.report.frame import context_tokens_by_arm, load_run
from bench.report.png import CHARTS_DIR, PngSession
from bench.report.tables import (
    abstention_table,
    accuracy_table,
    explorer_link,
    meta_text,
    miss_table,
    pairs_table,
    reach_table,
)
from bench.runmeta import RunMeta, read_run_meta
from bench.summarise.model import LABEL_SCHEMES, Summary
from bench.summarise.scales import OFFLINE_F1_BANNER, scale_banner

OFFLINE_BANNER = OFFLINE_F1_BANNER.format(threshold=0.5)
REPORT_NAME = "report.html"
_CSS = """
body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:1100px;color:#222}
.banner{background:#b00020;color:#fff;font-weight:700;font-size:1.3rem;padding:.8rem 1rem;
border-radius:6px;margin:1rem 0}.verdict.ok{background:#1b5e20;color:#fff;padding:.8rem 1rem;
border-radius:6px;margin:1rem 0}.verdict ul{font-size:1rem;font-weight:400;margin:.4rem 0 0}
table{border-collapse:collapse;margin:.5rem 0 1.5rem}td,th{border:1px solid #ccc;
padding:.25rem .6rem;text-align:right}th{background:#f4f4f4}td:first-child,th:first-child{
text-align:left}code{background:#f4f4f4;padding:0 .2rem}.notes li{color:#8a4b00}
"""


def build_report(run_dir: Path, labels: str = "official") -> str:
    """The whole report of a run as one HTML document (plotly.js inlined)."""
    return _build(run_dir, labels)[0]


def _build(run_dir: Path, labels: str) -> tuple[str, list[tuple[str, go.Figure]], Summary]:
    """The report's HTML, its charts by name (each labelled with the run's scale), the summary."""
    summary = summarise.summarise_run(run_dir, labels=labels)
    tokens = context_tokens_by_arm(load_run(run_dir, labels=labels))
    figures = [
        ("accuracy", charts.accuracy_figure(summary)),
        ("categories", charts.category_figure(summary)),
        ("pairs", charts.pairs_figure(summary)),
        ("tokens", charts.tokens_figure(summary, tokens)),
        ("efficiency", charts.efficiency_figure(summary)),
        ("speed", charts.speed_figure(summary)),
        ("latency", charts.latency_figure(summary)),
        ("budgets", budget_figure(summary)),
    ]
    parts = [_header(summary), accuracy_table(summary), abstention_table(summary)]
    parts += [reach_table(summary), miss_table(summary), errata_html(summary)]
    inline_js = True  # plotly.js goes inline once, with the first figure
    label = scale_label(summary)
    for name, fig in figures:
        if fig is None:
            continue
        charts.label_scale(fig, label)
        parts.append(fig.to_html(full_html=False, include_plotlyjs=inline_js, div_id=f"fig-{name}"))
        inline_js = False
        if name == "pairs":
            parts.append(pairs_table(summary))
        if name == "budgets":
            parts.append(budget_table(summary))
    parts.append(coverage_table(summary))
    title = html.escape(f"armbench report — {Path(summary.run_dir).name}")
    page = (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        f"<style>{_CSS}</style></head><body>\n" + "\n".join(parts) + "\n</body></html>\n"
    )
    return page, [(name, fig) for name, fig in figures if fig is not None], summary


def write_report(run_dir: Path, labels: str = "official", png: bool = True) -> Path:
    """Write `RUN_DIR/report.html` (and `SUMMARY.md` if absent); return the report's path.

    With `png`, also `RUN_DIR/charts/<chart>.png` when a browser is available
    (`bench.report.png`), else a one-line note on stderr. The browser is started before
    the pages are built, so its start-up overlaps them.
    """
    with PngSession() if png else nullcontext() as session:  # the browser starts now
        report, figures, summary = _build(run_dir, labels)
        path = run_dir / REPORT_NAME
        tmp = path.with_name(f".{REPORT_NAME}.tmp")
        tmp.write_text(report, encoding="utf-8")
        tmp.replace(path)
        if not (run_dir / "SUMMARY.md").exists():
            summarise.main([str(run_dir), "--write", "--labels", labels])
        write_explorer(run_dir, read_run_meta(run_dir / "run.json")[0], labels, summary)
        if session is not None:
            pngs, skipped = session.write(figures, run_dir)
            if skipped:
                print(f"note: PNG export of the charts skipped: {skipped}", file=sys.stderr)
            else:
                print(f"wrote {len(pngs)} chart PNGs to {run_dir / CHARTS_DIR}", file=sys.stderr)
    return path


def scale_label(summary: Summary) -> str:
    """The run's scale, as every chart (and its PNG) carries it: the banner, else the rule."""
    scales = sorted(set(summary.flags.scales.values())) or [summary.outcome]
    return offline_banner(summary) or f"outcome {', '.join(scales)}"


def offline_banner(summary: Summary) -> str:
    """The warning an offline run carries (or a run mixing scales); names the rule used."""
    offline = bool(summary.meta and summary.meta.offline)
    found = scale_banner(summary.flags.scales, offline, summary.outcome, summary.f1_threshold)
    return found or ""


def _header(summary: Summary) -> str:
    """Run metadata from run.json, the offline banner, and the summariser's notes."""
    esc = html.escape
    meta = summary.meta or RunMeta()
    judge_text = (
        ", ".join(f"{j.judge_id} ({j.model}, prompt {j.prompt_hash})" for j in meta.judges)
        or "none"
    )
    commit, dirty = meta.provenance.git_commit, meta.provenance.git_dirty
    dataset = summary.dataset
    rows = [
        (
            "dataset",
            f"{esc(meta_text(dataset))} — sha256 "
            f"<code>{esc(meta_text(meta.dataset.sha256))}</code>",
        ),
        (
            "questions",
            f"{summary.n_questions['scored']} scored (categories 1–4), "
            f"{summary.n_questions['all']} in all"
            if summary.locomo_style
            else f"{summary.n_questions['all']}",
        ),
        ("provider", esc(meta_text(meta.provider.name))),
        ("answerer", esc(meta_text(meta.provider.answerer_model))),
        ("judges", esc(judge_text)),
        ("outcome rule", f"<code>{esc(summary.outcome)}</code>"),
        ("category labels", esc(summary.labels)),
        ("git commit", f"<code>{esc(meta_text(commit))}</code>{' (dirty)' if dirty else ''}"),
        ("created", esc(meta_text(meta.created_at))),
    ]
    table = "".join(f"<tr><th>{esc(k)}</th><td>{v}</td></tr>" for k, v in rows)
    parts = [f"<h1>armbench report — {esc(Path(summary.run_dir).name)}</h1>"]
    if banner := offline_banner(summary):
        parts.append(f'<div class="banner">{esc(banner)}</div>')
    parts += [f"<table>{table}</table>", explorer_link()]
    if summary.notes:
        items = "".join(f"<li>{esc(n)}</li>" for n in summary.notes)
        parts.append(f'<ul class="notes">{items}</ul>')
    first = [parts[0], summary.verdict.html(), summary.flags.banner_html()]
    return "\n".join([*first, *parts[1:]])  # the verdict and the flags first


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bench.report", description=(__doc__ or "").splitlines()[0]
    )
    parser.add_argument("run_dir", type=Path, help="run directory holding questions/*.json")
    parser.add_argument("--labels", choices=sorted(LABEL_SCHEMES), default="official")
    parser.add_argument(
        "--no-png", action="store_true", help="skip the charts/*.png export (needs a browser)"
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """CLI entry point: write report.html; 2 with a one-line message on a bad RUN_DIR."""
    args = _parser().parse_args(argv)
    return one_line_errors(lambda: _write_and_say(args.run_dir, args.labels, not args.no_png))


def _write_and_say(run_dir: Path, labels: str, png: bool) -> int:
    """`write_report`, then name the file on stderr; 0."""
    if not (run_dir / "questions").is_dir():
        raise BenchError(f"{run_dir}: not a run directory (no questions/ folder)")
    path = write_report(run_dir, labels, png=png)
    print(f"wrote {path}", file=sys.stderr)
    return 0
