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
from typing import Any

import plotly.graph_objects as go

from bench import summarise
from bench.errors import BenchError
from bench.records import OK
from bench.report.errata import errata_html
from bench.report.explorer import write_explorer
from bench.report.frame import load_run
from bench.report.png import CHARTS_DIR, PngSession
from bench.report.tables import (
    SET_TITLES,
    abstention_table,
    accuracy_table,
    meta_text,
    p_text,
    pair_rows,
    pair_title,
    pairs_table,
    shown_sets,
)
from bench.runmeta import RunMeta, read_run_meta
from bench.scoring.rules import Outcome
from bench.summarise.model import LABEL_SCHEMES, ArmStats, Summary
from bench.summarise.stats import Rate

OFFLINE_BANNER = "OFFLINE — extractive answerer, official F1 ≥ 0.5; not LLM-judged"
REPORT_NAME = "report.html"
_LAYOUT: dict[str, Any] = {
    "template": "plotly_white",
    "height": 420,
    "barmode": "group",
    "margin": {"t": 60, "b": 60, "l": 60, "r": 20},
}
_LEGEND: dict[str, Any] = {"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0}
_CSS = """
body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:1100px;color:#222}
.banner{background:#b00020;color:#fff;font-weight:700;font-size:1.3rem;padding:.8rem 1rem;
border-radius:6px;margin:1rem 0}
table{border-collapse:collapse;margin:.5rem 0 1.5rem}td,th{border:1px solid #ccc;
padding:.25rem .6rem;text-align:right}th{background:#f4f4f4}td:first-child,th:first-child{
text-align:left}code{background:#f4f4f4;padding:0 .2rem}.notes li{color:#8a4b00}
"""


def build_report(run_dir: Path, labels: str = "official") -> str:
    """The whole report of a run as one HTML document (plotly.js inlined)."""
    return _build(run_dir, labels)[0]


def _build(run_dir: Path, labels: str) -> tuple[str, list[tuple[str, go.Figure]]]:
    """The report's HTML and its charts by name."""
    summary = summarise.summarise_run(run_dir, labels=labels)
    tokens = _context_tokens(run_dir, labels)
    figures = [
        ("accuracy", _accuracy_figure(summary)),
        ("categories", _category_figure(summary)),
        ("pairs", _pairs_figure(summary)),
        ("tokens", _tokens_figure(summary, tokens)),
        ("efficiency", _efficiency_figure(summary)),
        ("speed", _speed_figure(summary)),
        ("latency", _latency_figure(summary)),
    ]
    parts = [_header(summary), accuracy_table(summary), abstention_table(summary)]
    parts.append(errata_html(summary))
    inline_js = True  # plotly.js goes inline once, with the first figure
    for name, fig in figures:
        if fig is None:
            continue
        parts.append(fig.to_html(full_html=False, include_plotlyjs=inline_js, div_id=f"fig-{name}"))
        inline_js = False
        if name == "pairs":
            parts.append(pairs_table(summary))
    title = html.escape(f"armbench report — {Path(summary.run_dir).name}")
    page = (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        f"<style>{_CSS}</style></head><body>\n" + "\n".join(parts) + "\n</body></html>\n"
    )
    return page, [(name, fig) for name, fig in figures if fig is not None]


def write_report(run_dir: Path, labels: str = "official", png: bool = True) -> Path:
    """Write `RUN_DIR/report.html` (and `SUMMARY.md` if absent); return the report's path.

    With `png`, also `RUN_DIR/charts/<chart>.png` when a browser is available
    (`bench.report.png`), else a one-line note on stderr. The browser is started before
    the pages are built, so its start-up overlaps them.
    """
    with PngSession() if png else nullcontext() as session:  # the browser starts now
        report, figures = _build(run_dir, labels)
        path = run_dir / REPORT_NAME
        tmp = path.with_name(f".{REPORT_NAME}.tmp")
        tmp.write_text(report, encoding="utf-8")
        tmp.replace(path)
        if not (run_dir / "SUMMARY.md").exists():
            summarise.main([str(run_dir), "--write", "--labels", labels])
        write_explorer(run_dir, read_run_meta(run_dir / "run.json")[0], labels)
        if session is not None:
            pngs, skipped = session.write(figures, run_dir)
            if skipped:
                print(f"note: PNG export of the charts skipped: {skipped}", file=sys.stderr)
            else:
                print(f"wrote {len(pngs)} chart PNGs to {run_dir / CHARTS_DIR}", file=sys.stderr)
    return path


def _context_tokens(run_dir: Path, labels: str) -> dict[str, list[int]]:
    """Context tokens of every `ok` answer, per arm."""
    df = load_run(run_dir, labels=labels)
    ok = df[(df["status"] == OK) & df["context_tokens"].notna()]
    return {
        str(arm): [int(v) for v in group["context_tokens"]]
        for arm, group in ok.groupby("arm", sort=False)
    }


def offline_banner(summary: Summary) -> str:
    """The warning an offline run carries; names the outcome rule actually used."""
    if (rule := Outcome.parse(summary.outcome)) and rule.f1_threshold is not None:
        if summary.f1_threshold == 0.5:
            return OFFLINE_BANNER
        return (
            f"OFFLINE — extractive answerer, official F1 ≥ {summary.f1_threshold:g}; not LLM-judged"
        )
    return f"OFFLINE — extractive answerer; outcome {summary.outcome}"


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
    if meta.offline is True:
        parts.append(f'<div class="banner">{esc(offline_banner(summary))}</div>')
    parts.append(f"<table>{table}</table>")
    if summary.notes:
        items = "".join(f"<li>{esc(n)}</li>" for n in summary.notes)
        parts.append(f'<ul class="notes">{items}</ul>')
    return "\n".join([parts[0], summary.flags.banner_html(), *parts[1:]])  # flags first


def _error_bars(rates: list[Rate]) -> dict[str, Any]:
    """Asymmetric Plotly error bars (in %) from Wilson intervals."""
    plus = [100 * (r.ci[1] - r.value) if r.ci and r.value is not None else 0 for r in rates]
    minus = [100 * (r.value - r.ci[0]) if r.ci and r.value is not None else 0 for r in rates]
    return {"type": "data", "symmetric": False, "array": plus, "arrayminus": minus}


def _rate_bar(name: str, x: list[str], rates: list[Rate]) -> go.Bar:
    """A bar per rate (accuracy in %), with Wilson error bars and k/n in the hover."""
    return go.Bar(
        name=name,
        x=x,
        y=[100 * r.value if r.value is not None else None for r in rates],
        error_y=_error_bars(rates),
        customdata=[[r.k, r.n] for r in rates],
        hovertemplate="%{x}: %{y:.1f}% (%{customdata[0]}/%{customdata[1]})<extra>"
        + name
        + "</extra>",
    )


def _rate_range(rates: list[Rate]) -> list[float]:
    """A % axis that fits every value with its Wilson interval, padded, clipped to 0–100.

    Fixed 0–100 axes squash runs whose accuracies all sit under 50%; the padding is 5% of
    the span (at least 2 points) so error-bar caps never touch the frame.
    """
    ends = [100 * e for r in rates if r.ci is not None and r.value is not None for e in r.ci]
    if not ends:
        return [0.0, 100.0]
    lo, hi = min(ends), max(ends)
    pad = max(2.0, 0.05 * (hi - lo))
    return [max(0.0, lo - pad), min(100.0, hi + pad)]


def _arm_layout(labels: list[str]) -> dict[str, Any]:
    """The shared layout, with x labels angled and a taller bottom margin when they are long.

    Plotly keeps horizontal labels that fit; past ~12 characters or 4 labels they are set
    at -30° and the margin grows with the longest label, so no two labels collide.
    """
    longest = max((len(label) for label in labels), default=0)
    if longest <= 12 and len(labels) <= 4:
        return {**_LAYOUT, "legend": _LEGEND}
    # automargin grows the bottom margin to fit the angled labels inside the figure's
    # height, so the height grows by about the labels' drop to keep the plot area.
    return {
        **_LAYOUT,
        "xaxis": {"tickangle": -30, "automargin": True},
        "legend": _LEGEND,
        "height": 420 + min(200, 4 * longest),
    }


def _accuracy_figure(summary: Summary) -> go.Figure:
    """Accuracy per arm, one bar group per denominator, Wilson 95% error bars."""
    sets = shown_sets(summary)
    names = [summary.flags.arm_label(a) for a in summary.arms]
    fig = go.Figure()
    for s in sets:
        label = f"{SET_TITLES[s]} (n={summary.n_questions[s]})"
        fig.add_trace(_rate_bar(label, names, [a.accuracy[s] for a in summary.arms.values()]))
    fig.update_layout(
        title="Accuracy per arm (Wilson 95% interval)" + summary.flags.judge_mark(),
        yaxis_title="% correct",
        yaxis_range=_rate_range([a.accuracy[s] for a in summary.arms.values() for s in sets]),
        **_arm_layout(names),
    )
    return fig


def _category_figure(summary: Summary) -> go.Figure:
    """Accuracy per category (or question type) per arm, Wilson 95% error bars."""
    groups = list(summary.group_labels)
    x = [
        f"{g} {summary.group_labels[g]} (n={summary.group_sizes.get(g, 0)})"
        if g.isdigit()
        else f"{g} (n={summary.group_sizes.get(g, 0)})"
        for g in groups
    ]
    fig = go.Figure()
    for name, arm in summary.arms.items():
        rates = [_group_rate(arm, g) for g in groups]
        fig.add_trace(_rate_bar(summary.flags.arm_label(name), x, rates))
    fig.update_layout(
        title=f"Accuracy per category ({summary.labels} labels){summary.flags.judge_mark()}",
        yaxis_title="% correct",
        yaxis_range=_rate_range([_group_rate(a, g) for a in summary.arms.values() for g in groups]),
        **_arm_layout(x),
    )
    return fig


def _group_rate(arm: ArmStats, group: str) -> Rate:
    stats = arm.groups.get(group)
    return stats.accuracy if stats is not None else Rate(0, 0)


def _pairs_figure(summary: Summary) -> go.Figure | None:
    """Discordant pairs per arm pair: A right & B wrong vs B right & A wrong, raw and Holm p."""
    rows = pair_rows(summary)
    if not rows:
        return None
    # p-values go in the tick labels (angled with the rest), never as floating text that
    # collides with its neighbours once there are more than a few pairs.
    x = [f"{pair_title(r, summary)}<br>{p_text(r.pooled)}" for r in rows]
    fig = go.Figure(
        [
            go.Bar(name="A only (A right, B wrong)", x=x, y=[r.pooled.a_only for r in rows]),
            go.Bar(name="B only (B right, A wrong)", x=x, y=[r.pooled.b_only for r in rows]),
        ]
    )
    fig.update_layout(
        title="Paired discordance (exact McNemar p; Holm-adjusted)" + summary.flags.judge_mark(),
        yaxis_title="questions",
        **_arm_layout([pair_title(r, summary) for r in rows]),
    )
    return fig


def _tokens_figure(summary: Summary, tokens: dict[str, list[int]]) -> go.Figure | None:
    """Context tokens per answer, per arm (box, log axis), the mean as a dashed line.

    Log scale because raw's whole-transcript context is ~10× a memory arm's: on a
    linear axis every memory arm is a flat line.
    """
    if not any(tokens.values()):
        return None
    fig = go.Figure()
    for name in summary.arms:
        values = tokens.get(name, [])
        if values:
            fig.add_trace(go.Box(name=name, y=values, boxmean=True, boxpoints=False))
    layout = {**_arm_layout(list(summary.arms)), "barmode": None}
    fig.update_layout(
        title="Context tokens per answer (log scale; dashed line = mean)",
        yaxis_title="tokens",
        yaxis=_log_axis([v for vs in tokens.values() for v in vs if v > 0] or [1]),
        showlegend=False,
        **layout,
    )
    return fig


def _log_axis(values: list[float]) -> dict[str, Any]:
    """A log axis ticked at 1-2-5 steps (`1k`, `2k`, `5k`, `10k`...) spanning the values.

    Plotly's default log ticks label every digit in a tiny font; 1-2-5 steps stay legible.
    """
    lo, hi = min(values), max(values)
    ticks = [m * 10**e for e in range(0, 9) for m in (1, 2, 5) if lo / 2 <= m * 10**e <= hi * 2]
    return {
        "type": "log",
        "tickvals": ticks,
        "ticktext": [f"{t / 1000:g}k" if t >= 1000 else f"{t:g}" for t in ticks],
    }


def _efficiency_figure(summary: Summary) -> go.Figure | None:
    """Accuracy (Wilson 95%) against mean context tokens per arm, log x; one marker per arm."""
    return _accuracy_scatter(
        summary,
        {n: a.context_tokens_mean for n, a in summary.arms.items()},
        "Efficiency: accuracy ({}) vs mean context tokens",
        ("mean context tokens per answer (log scale)", "tokens"),
    )


def _speed_figure(summary: Summary) -> go.Figure | None:
    """Accuracy (Wilson 95%) against median answering latency per arm, log x."""
    return _accuracy_scatter(
        summary,
        {n: a.latency_ms.get("p50") for n, a in summary.arms.items()},
        "Speed: accuracy ({}) vs median answering latency",
        ("median latency per answer, ms (log scale)", "ms"),
    )


def _accuracy_scatter(
    summary: Summary, x_of: dict[str, float | None], title: str, axis: tuple[str, str]
) -> go.Figure | None:
    """One marker per arm: accuracy (Wilson 95%) on the main set against `x_of[arm]`, log x."""
    key = shown_sets(summary)[0]
    arms = [(n, a) for n, a in summary.arms.items() if x_of.get(n) and a.accuracy[key].n]
    if not arms:
        return None
    fig = go.Figure()
    for name, arm in arms:
        rate = arm.accuracy[key]
        fig.add_trace(
            go.Scatter(
                name=summary.flags.arm_label(name),
                x=[x_of[name]],
                y=[100 * rate.value if rate.value is not None else None],
                mode="markers",
                marker={"size": 12},
                error_y=_error_bars([rate]),
                hovertemplate=f"{html.escape(name)}: %{{y:.1f}}% at %{{x:,.0f}} {axis[1]}"
                "<extra></extra>",
            )
        )
    fig.update_layout(
        title=title.format(SET_TITLES[key]) + summary.flags.judge_mark(),
        xaxis_title=axis[0],
        xaxis=_log_axis([float(x_of[n] or 1) for n, _ in arms]),
        yaxis_title="% correct",
        yaxis_range=_rate_range([a.accuracy[key] for _, a in arms]),
        **{**_LAYOUT, "legend": _LEGEND, "barmode": None},
    )
    return fig


def _latency_figure(summary: Summary) -> go.Figure | None:
    """Answering latency percentiles (ms) per arm."""
    keys = list(dict.fromkeys(k for arm in summary.arms.values() for k in arm.latency_ms))
    if not keys:
        return None
    arms = list(summary.arms)
    fig = go.Figure(
        [go.Bar(name=k, x=arms, y=[summary.arms[a].latency_ms.get(k) for a in arms]) for k in keys]
    )
    fig.update_layout(title="Answering latency per arm", yaxis_title="ms", **_arm_layout(arms))
    return fig


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
    run_dir: Path = args.run_dir
    if not (run_dir / "questions").is_dir():
        print(f"error: {run_dir}: not a run directory (no questions/ folder)", file=sys.stderr)
        return 2
    try:
        path = write_report(run_dir, args.labels, png=not args.no_png)
    except (summarise.SummaryError, BenchError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        from bench.cli_errors import os_error_line

        print(os_error_line(exc), file=sys.stderr)
        return 2
    print(f"wrote {path}", file=sys.stderr)
    return 0
