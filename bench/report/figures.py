"""The report's Plotly figures, built from the summariser's typed `Summary`.

Accuracy axes start at 0 with the Wilson 95% intervals as error bars; arm names are
angled when long or many; paired discordance is drawn as horizontal bars so its labels
never overlap; context tokens and latency go on log axes ticked at 1-2-5 steps.
"""

from __future__ import annotations

import html
from typing import Any

import plotly.graph_objects as go

from bench.report.tables import SET_TITLES, p_text, pair_rows, pair_title, shown_sets
from bench.summarise.model import ArmStats, Summary
from bench.summarise.stats import Rate

LAYOUT: dict[str, Any] = {
    "template": "plotly_white",
    "height": 420,
    "barmode": "group",
    "margin": {"t": 60, "b": 60, "l": 60, "r": 20},
}
LEGEND: dict[str, Any] = {"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0}


def error_bars(rates: list[Rate]) -> dict[str, object]:
    """Asymmetric Plotly error bars (in %) from Wilson intervals."""
    plus = [100 * (r.ci[1] - r.value) if r.ci and r.value is not None else 0 for r in rates]
    minus = [100 * (r.value - r.ci[0]) if r.ci and r.value is not None else 0 for r in rates]
    return {"type": "data", "symmetric": False, "array": plus, "arrayminus": minus}


def rate_bar(name: str, x: list[str], rates: list[Rate]) -> go.Bar:
    """A bar per rate (accuracy in %), with Wilson error bars and k/n in the hover."""
    return go.Bar(
        name=name,
        x=x,
        y=[100 * r.value if r.value is not None else None for r in rates],
        error_y=error_bars(rates),
        customdata=[[r.k, r.n] for r in rates],
        hovertemplate="%{x}: %{y:.1f}% (%{customdata[0]}/%{customdata[1]})<extra>"
        + name
        + "</extra>",
    )


def rate_range(rates: list[Rate]) -> list[float]:
    """A % axis from 0 to above every value's Wilson interval, padded, at most 100.

    The axis starts at 0 so bar lengths compare as ratios (an axis starting near the
    lowest bar makes a 3-point gap look several times its size); the intervals are drawn
    as error bars, and the top is padded by 5% of the span (at least 2 points) so their
    caps never touch the frame.
    """
    ends = [100 * e for r in rates if r.ci is not None and r.value is not None for e in r.ci]
    if not ends:
        return [0.0, 100.0]
    hi = max(ends)
    return [0.0, min(100.0, hi + max(2.0, 0.05 * hi))]


def arm_layout(labels: list[str]) -> dict[str, object]:
    """The shared layout, with x labels angled and a taller bottom margin when they are long.

    Plotly keeps horizontal labels that fit; past ~12 characters or 4 labels they are set
    at -30° and the margin grows with the longest label, so no two labels collide.
    """
    longest = max((len(label) for label in labels), default=0)
    if longest <= 12 and len(labels) <= 4:
        return {**LAYOUT, "legend": LEGEND}
    # automargin grows the bottom margin to fit the angled labels inside the figure's
    # height, so the height grows by about the labels' drop to keep the plot area.
    return {
        **LAYOUT,
        "xaxis": {"tickangle": -30, "automargin": True},
        "legend": LEGEND,
        "height": 420 + min(200, 4 * longest),
    }


def accuracy_figure(summary: Summary) -> go.Figure:
    """Accuracy per arm, one bar group per denominator, Wilson 95% error bars."""
    sets = shown_sets(summary)
    names = [summary.flags.arm_label(a) for a in summary.arms]
    fig = go.Figure()
    for s in sets:
        label = f"{SET_TITLES[s]} (n={summary.n_questions[s]})"
        fig.add_trace(rate_bar(label, names, [a.accuracy[s] for a in summary.arms.values()]))
    fig.update_layout(
        title="Accuracy per arm (Wilson 95% interval)" + summary.flags.judge_mark(),
        yaxis_title="% correct",
        yaxis_range=rate_range([a.accuracy[s] for a in summary.arms.values() for s in sets]),
        **arm_layout(names),
    )
    return fig


def category_figure(summary: Summary) -> go.Figure:
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
        rates = [group_rate(arm, g) for g in groups]
        fig.add_trace(rate_bar(summary.flags.arm_label(name), x, rates))
    fig.update_layout(
        title=f"Accuracy per category ({summary.labels} labels){summary.flags.judge_mark()}",
        yaxis_title="% correct",
        yaxis_range=rate_range([group_rate(a, g) for a in summary.arms.values() for g in groups]),
        **arm_layout(x),
    )
    return fig


def group_rate(arm: ArmStats, group: str) -> Rate:
    """The arm's accuracy on one group (0 of 0 when the arm has none)."""
    stats = arm.groups.get(group)
    return stats.accuracy if stats is not None else Rate(0, 0)


def pairs_figure(summary: Summary) -> go.Figure | None:
    """Discordant pairs per arm pair: A right & B wrong vs B right & A wrong, raw and Holm p.

    Horizontal bars, one row per pair with its p-values in the row's label: labels then
    sit one under another at the left, readable for any number of arms (5 arms make 10
    pairs per set), where angled labels under vertical bars ran into each other.
    """
    rows = pair_rows(summary)
    if not rows:
        return None
    y = [f"{pair_title(r, summary)} — {p_text(r.pooled)}" for r in rows]
    fig = go.Figure(
        [
            go.Bar(name="A only (A right, B wrong)", y=y, x=[r.pooled.a_only for r in rows]),
            go.Bar(name="B only (B right, A wrong)", y=y, x=[r.pooled.b_only for r in rows]),
        ]
    )
    fig.update_traces(orientation="h")
    fig.update_layout(
        title="Paired discordance (exact McNemar p per question; exact sign-flip p over "
        "conversations; Holm-adjusted)" + summary.flags.judge_mark(),
        xaxis_title="questions",
        yaxis={"autorange": "reversed", "automargin": True},
        # the legend sits a share of a tall plot above it: a taller top margin keeps it
        # off the title
        **{**LAYOUT, "legend": LEGEND, "height": pairs_height(len(rows)), "margin": _TALL_TOP},
    )
    return fig


_TALL_TOP = {**LAYOUT["margin"], "t": 100}


def pairs_height(rows: int) -> int:
    """Figure height for `rows` pairs: two bars of ~14 px each, plus title and legend."""
    return max(int(LAYOUT["height"]), 140 + 36 * rows)


def tokens_figure(summary: Summary, tokens: dict[str, list[int]]) -> go.Figure | None:
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
    layout = {**arm_layout(list(summary.arms)), "barmode": None}
    fig.update_layout(
        title="Context tokens per answer (log scale; dashed line = mean)",
        yaxis_title="tokens",
        yaxis=log_axis([v for vs in tokens.values() for v in vs if v > 0] or [1]),
        showlegend=False,
        **layout,
    )
    return fig


def log_axis(values: list[float]) -> dict[str, object]:
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


def efficiency_figure(summary: Summary) -> go.Figure | None:
    """Accuracy (Wilson 95%) against mean context tokens per arm, log x; one marker per arm."""
    return accuracy_scatter(
        summary,
        {n: a.context_tokens_mean for n, a in summary.arms.items()},
        "Efficiency: accuracy ({}) vs mean context tokens",
        ("mean context tokens per answer (log scale)", "tokens"),
    )


def speed_figure(summary: Summary) -> go.Figure | None:
    """Accuracy (Wilson 95%) against median answering latency per arm, log x."""
    return accuracy_scatter(
        summary,
        {n: a.latency_ms.get("p50") for n, a in summary.arms.items()},
        "Speed: accuracy ({}) vs median answering latency",
        ("median latency per answer, ms (log scale)", "ms"),
    )


def accuracy_scatter(
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
                error_y=error_bars([rate]),
                hovertemplate=f"{html.escape(name)}: %{{y:.1f}}% at %{{x:,.0f}} {axis[1]}"
                "<extra></extra>",
            )
        )
    fig.update_layout(
        title=title.format(SET_TITLES[key]) + summary.flags.judge_mark(),
        xaxis_title=axis[0],
        xaxis=log_axis([float(x_of[n] or 1) for n, _ in arms]),
        yaxis_title="% correct",
        yaxis_range=rate_range([a.accuracy[key] for _, a in arms]),
        **{**LAYOUT, "legend": LEGEND, "barmode": None},
    )
    return fig


def latency_figure(summary: Summary) -> go.Figure | None:
    """Answering latency percentiles (ms) per arm, then retrieval's p50 and p90 when recorded.

    Retrieval is each result's `retrieve_ms`: the arm's own retrieve call, which for a
    live arm is the service's search round trip.
    """
    keys = list(dict.fromkeys(k for arm in summary.arms.values() for k in arm.latency_ms))
    if not keys:
        return None
    arms = list(summary.arms)
    stats = summary.arms
    bars = [go.Bar(name=k, x=arms, y=[stats[a].latency_ms.get(k) for a in arms]) for k in keys]
    if any(stats[a].retrieve_ms for a in arms):
        bars += [
            go.Bar(name=f"retrieval {k}", x=arms, y=[stats[a].retrieve_ms.get(k) for a in arms])
            for k in ("p50", "p90")
        ]
    fig = go.Figure(bars)
    fig.update_layout(
        title="Latency per arm: answering, and retrieval (retrieve_ms)",
        yaxis_title="ms",
        **arm_layout(arms),
    )
    return fig


def label_scale(fig: go.Figure, label: str) -> None:
    """Add the run's scale under the figure's title, so a chart (or its PNG) says it."""
    title = fig.layout.title.text or ""
    fig.update_layout(title_text=f"{title}<br><sup>{html.escape(label)}</sup>")
