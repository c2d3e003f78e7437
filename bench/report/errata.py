"""The report's errata section: both answer keys side by side (numbers from the summary)."""

from __future__ import annotations

import html

from bench.summarise.model import Summary


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _row(cells: list[str]) -> str:
    return "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>"


def _head(cells: list[str]) -> str:
    return "<tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in cells) + "</tr>"


def errata_html(summary: Summary) -> str:
    """Affected questions and ceiling per category, then each arm under both keys."""
    view = summary.errata
    if view is None:
        return ""
    groups = "".join(
        _row(
            [
                f"{g} {summary.group_labels.get(g, '')}",
                str(n),
                str(view.score_affected[g]),
                str(view.citation_only[g]),
                _pct(view.ceiling[g]),
            ]
        )
        for g, n in view.group_sizes.items()
    )
    arms = "".join(
        _row(
            [
                a.name,
                f"{_pct(a.official.accuracy.value)} (n={a.official.accuracy.n})",
                f"{_pct(a.corrected.accuracy.value)} (n={a.corrected.accuracy.n})",
                _num(a.official.f1),
                _num(a.corrected.f1),
                _pct(a.official.evidence_recall),
                _pct(a.corrected.evidence_recall),
            ]
        )
        for a in view.arms.values()
    )
    return (
        "<h2>Answer-key errata (official key is the headline)</h2>"
        f"<p>The audit lists {view.listed} questions of this run; {view.affected_total} change "
        f"the gold answer. Ceiling under the official key (categories 1–4): "
        f"{_pct(view.ceiling['scored'])}.</p><table>"
        + _head(["category", "n", "score-affected", "citation-only", "ceiling (official)"])
        + groups
        + "</table><table>"
        + _head(
            ["arm", "acc official", "acc corrected", "F1 official", "F1 corrected"]
            + ["evidence recall official", "evidence recall corrected"]
        )
        + arms
        + "</table>"
    )
