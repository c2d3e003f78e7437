"""Markdown and JSON of the budget and coverage views (bench.summarise.budgets). Stdlib only."""

from __future__ import annotations

from bench.summarise.clustered_view import P_HEADER, p_cells, pair_json
from bench.summarise.model import BudgetCell, PairedTest, Summary
from bench.summarise.stats import Rate

_DASH = "—"


def _acc(rate: Rate) -> str:
    if rate.value is None or rate.ci is None:
        return _DASH
    lo, hi = rate.ci
    return f"{100 * rate.value:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]"


def _tokens(value: float | None) -> str:
    return _DASH if value is None else f"{value:,.0f}"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def render_budgets(s: Summary) -> list[str]:
    """The headline row, accuracy against budget per arm, and the pairs at each budget."""
    view = s.budgets
    if view is None:
        return []
    b = view.headline
    head = [
        "arm",
        f"accuracy at equal budget {b}",
        f"context at {b}",
        "unconstrained accuracy",
        "unconstrained context",
    ]
    rows = [
        [
            name,
            _acc(cells[b].accuracy),
            _tokens(cells[b].context_tokens_mean),
            _acc(s.arms[name].accuracy["scored"]),
            _tokens(s.arms[name].context_tokens_mean),
        ]
        for name, cells in view.cells.items()
    ]
    out = ["", f"## Accuracy at equal context budget (scored; budget in tokens, headline B = {b})"]
    out += ["", *_table(head, rows), ""]
    curve = [
        [name, *(_acc(c.accuracy) for c in cells.values())] for name, cells in view.cells.items()
    ]
    out += _table(["arm", *(f"B = {x}" for x in view.budgets)], curve)
    out += [
        "",
        "Pairs at each budget (exact McNemar on question_id and exact sign-flip over "
        "clusters, each Holm-adjusted within each budget):",
    ]
    pairs = [
        [str(budget), row.a, row.b, *_test_cells(row.pooled)]
        for budget, rows in view.pairs.items()
        for row in rows
    ]
    out += ["", *_table(["budget", "A", "B", "n", "A only", "B only", *P_HEADER], pairs)]
    out += [
        "",
        f"Headline B: the largest budget every arm fills on average ({b} ≤ the smallest "
        "mean unconstrained context); the context is cut by methodology §3.5.",
    ]
    return out


def _test_cells(t: PairedTest) -> list[str]:
    return [str(t.n), str(t.a_only), str(t.b_only), *p_cells(t)]


def render_coverage(s: Summary) -> list[str]:
    """Coverage of the haystack beside accuracy; near full-context arms marked."""
    if not s.coverage:
        return []
    rows = []
    for row in s.coverage:
        arm = s.arms[row.arm]
        share = _DASH if row.mean_share is None else f"{100 * row.mean_share:.1f}%"
        rows.append(
            [
                row.arm,
                _acc(arm.accuracy["scored"]),
                _tokens(arm.context_tokens_mean),
                share,
                f"{row.half_or_more}/{row.n}",
                "near full-context" if row.near_full else "",
            ]
        )
    head = ["arm", "accuracy", "context (mean tokens)", "coverage (mean)", "≥ half", "note"]
    return [
        "",
        "## Coverage of the haystack (context tokens / conversation tokens, scored)",
        "",
        *_table(head, rows),
        "",
        "near full-context: the context holds half the conversation "
        "or more on most questions; such an arm is not testing memory.",
    ]


def _cell_json(cell: BudgetCell) -> dict[str, object]:
    rate = cell.accuracy
    return {
        "k": rate.k,
        "n": rate.n,
        "acc": rate.value,
        "ci": list(rate.ci) if rate.ci else None,
        "context_tokens_mean": cell.context_tokens_mean,
    }


def budgets_json(s: Summary) -> dict[str, object]:
    """`budgets` and `coverage` keys of `--json` (docs/interfaces.md), each when there."""
    out: dict[str, object] = {}
    if (view := s.budgets) is not None:
        out["budgets"] = {
            "budgets": view.budgets,
            "headline": view.headline,
            "set": "scored",
            "arms": {
                n: {str(b): _cell_json(c) for b, c in cells.items()}
                for n, cells in view.cells.items()
            },
            "pairs": {
                str(b): [
                    {
                        "a": r.a,
                        "b": r.b,
                        "n": r.pooled.n,
                        "a_only": r.pooled.a_only,
                        "b_only": r.pooled.b_only,
                        "p": r.pooled.p,
                        "p_holm": r.pooled.p_holm,
                        "clustered": pair_json(r.pooled),
                    }
                    for r in rows
                ]
                for b, rows in view.pairs.items()
            },
        }
    if s.coverage:
        out["coverage"] = {
            r.arm: {
                "n": r.n,
                "mean_share": r.mean_share,
                "half_or_more": r.half_or_more,
                "near_full_context": r.near_full,
            }
            for r in s.coverage
        }
    return out
