"""The summary's added views, rendered by their own modules: Markdown and JSON. Stdlib only."""

from __future__ import annotations

from typing import Any

from bench.summarise.model import Summary


def added_sections(s: Summary) -> list[str]:
    """Judge runs, equivalence, cost, context budgets, coverage, then `Summary.sections`."""
    from bench.summarise.budget_render import render_budgets, render_coverage
    from bench.summarise.cost import render_cost
    from bench.summarise.equivalence import render_equivalence

    out: list[str] = []
    if s.judge_runs:
        from bench.summarise.judge_runs import render_judge_runs

        out += render_judge_runs(s.judge_runs, s.group_labels)
    out += render_equivalence(s.equivalence) + render_cost(s.cost)
    out += render_budgets(s) + render_coverage(s)
    return out + [line for section in s.sections.values() for line in section.markdown()]


def added_json(s: Summary) -> dict[str, Any]:
    """`judge_runs`, `equivalence`, `cost_per_correct`, `budgets`, `coverage`, `sections`' keys."""
    from bench.summarise.budget_render import budgets_json
    from bench.summarise.cost import cost_json
    from bench.summarise.equivalence import equivalence_json

    out: dict[str, Any] = {}
    if s.judge_runs:
        from bench.summarise.judge_runs import judge_runs_json

        out["judge_runs"] = judge_runs_json(s.judge_runs)
    if s.equivalence:
        out["equivalence"] = equivalence_json(s.equivalence)
    if s.cost is not None:
        out["cost_per_correct"] = cost_json(s.cost)
    return out | budgets_json(s) | {key: sec.to_json() for key, sec in s.sections.items()}
