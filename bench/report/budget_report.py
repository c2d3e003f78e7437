"""The report's context-budget curve and its tables: equal-budget headline, coverage.

The curve is accuracy (scored set, Wilson 95% error bars) against the context budget B
per arm, on a log x axis (budgets usually double); the headline table beside it gives
each arm's unconstrained accuracy and context size, so the reader sees where an arm
stops being cut.
"""

from __future__ import annotations

import html

import plotly.graph_objects as go

from bench.report.figures import LAYOUT, LEGEND, error_bars, rate_range
from bench.report.tables import pct
from bench.summarise.model import Summary


def budget_figure(summary: Summary) -> go.Figure | None:
    """Accuracy against context budget per arm (Wilson 95%); None without budgets."""
    view = summary.budgets
    if view is None:
        return None
    fig = go.Figure()
    rates = []
    for name, cells in view.cells.items():
        points = [cells[b].accuracy for b in view.budgets]
        rates += points
        label = summary.flags.arm_label(name)
        fig.add_trace(
            go.Scatter(
                name=label,
                x=view.budgets,
                mode="lines+markers",
                y=[100 * r.value if r.value is not None else None for r in points],
                error_y=error_bars(points),
                customdata=[[r.k, r.n] for r in points],
                hovertemplate="B = %{x}: %{y:.1f}% (%{customdata[0]}/%{customdata[1]})<extra>"
                + html.escape(label)
                + "</extra>",
            )
        )
    fig.update_layout(
        title=f"Accuracy at equal context budget (scored; headline B = {view.headline})"
        + summary.flags.judge_mark(),
        xaxis={"type": "log", "tickvals": view.budgets, "title": "context budget B (tokens)"},
        yaxis_title="% correct",
        yaxis_range=rate_range(rates),
        legend=LEGEND,
        **{k: v for k, v in LAYOUT.items() if k != "barmode"},
    )
    return fig


def budget_table(summary: Summary) -> str:
    """The headline row per arm: accuracy at equal budget B beside its unconstrained figures."""
    view = summary.budgets
    if view is None:
        return ""
    b = view.headline
    body = "".join(
        f"<tr><td>{html.escape(summary.flags.arm_label(name))}</td>"
        f"<td>{pct(cells[b].accuracy)}</td><td>{_tokens(cells[b].context_tokens_mean)}</td>"
        f"<td>{pct(summary.arms[name].accuracy['scored'])}</td>"
        f"<td>{_tokens(summary.arms[name].context_tokens_mean)}</td></tr>"
        for name, cells in view.cells.items()
    )
    head = (
        f"<tr><th>arm</th><th>accuracy at equal budget {b}</th><th>context at {b}</th>"
        "<th>unconstrained accuracy</th><th>unconstrained context</th></tr>"
    )
    return f"<h2>Accuracy at equal budget {b} tokens</h2><table>{head}{body}</table>"


def coverage_table(summary: Summary) -> str:
    """Each arm's coverage of the haystack beside its accuracy; near full-context marked."""
    if not summary.coverage:
        return ""
    body = "".join(
        f"<tr><td>{html.escape(summary.flags.arm_label(row.arm))}</td>"
        f"<td>{pct(summary.arms[row.arm].accuracy['scored'])}</td>"
        f"<td>{'–' if row.mean_share is None else f'{100 * row.mean_share:.1f}%'}</td>"
        f"<td>{row.half_or_more}/{row.n}</td>"
        f"<td>{'near full-context' if row.near_full else ''}</td></tr>"
        for row in summary.coverage
    )
    head = (
        "<tr><th>arm</th><th>accuracy</th><th>coverage (context / conversation tokens)</th>"
        "<th>questions ≥ half</th><th></th></tr>"
    )
    return f"<h2>Coverage of the haystack</h2><table>{head}{body}</table>"


def _tokens(value: float | None) -> str:
    return "–" if value is None else f"{value:,.0f}"
