"""Accuracy at equal context budgets, and how much of the haystack each arm's context covers.

Standard library only. Both views read the records once more (the main pass,
`scan.py`, stays as it is for runs without budgets), over the `scored` set:

* **Budgets** (`context_budgets=[...]`, bench/run/budgets.py): per arm and budget B, the
  accuracy of its answers with the context cut to B (Wilson 95%), the mean context sent,
  and every pair of arms tested at each B (exact McNemar on the questions both answered
  at B, Holm within each budget's family: `budget_pairs`). The headline budget is the
  largest B every arm fills on average (B ≤ the smallest mean unconstrained context),
  else the smallest B: above it an arm with a short context is not cut at all, and the
  comparison is no longer at equal budget.
* **Coverage**: per arm, the share of the conversation its context holds, context tokens
  / the unit's whole-transcript tokens (run.json `conversation_tokens`; for older runs,
  an untruncated raw arm's context, which is that transcript). An arm whose context
  holds half or more of the haystack on most questions is *near full-context*: it is
  not testing memory (the top-k ≥ sessions bypass).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import combinations
from typing import Any

from bench.records import OK, QuestionRecord
from bench.runmeta import RunMeta
from bench.summarise.model import NEAR_FULL, BudgetCell, BudgetView, CoverageRow, PairRow
from bench.summarise.pairing import Outcomes, Questions, apply_holm, paired
from bench.summarise.stats import Rate

SET = "scored"
"""The question set both views are computed on."""


def budget_view(
    records: list[QuestionRecord],
    names: list[str],
    scored: Questions,
    unconstrained: dict[str, Any],
    clusters: Sequence[int] | None = None,
) -> BudgetView | None:
    """The budget view of a run; None when no record holds a budget answer.

    `unconstrained`: arm -> mean context tokens without a budget (`ArmStats`);
    `clusters`: record position -> cluster index, for the clustered test at each budget.
    """
    right: dict[tuple[str, int], set[int]] = {}
    wrong: dict[tuple[str, int], set[int]] = {}
    tokens: dict[tuple[str, int], list[int]] = {}
    for i in scored:
        for name, result in records[i].arms.items():
            if result.status != OK or name not in names:
                continue
            for b in result.budgets:
                if b.status != OK or b.correct is None:
                    continue
                key = (name, b.budget)
                if i in right.get(key, ()) or i in wrong.get(key, ()):
                    continue  # a budget listed twice (a foreign record): the first counts
                (right if b.correct else wrong).setdefault(key, set()).add(i)
                tokens.setdefault(key, []).append(b.context_tokens or 0)
    budgets = sorted({b for _, b in (*right, *wrong)})
    if not budgets:
        return None
    outcomes = {
        key: (frozenset(right.get(key, ())), frozenset(wrong.get(key, ())))
        for key in {*right, *wrong}
    }
    cells = {
        n: {b: _cell(outcomes.get((n, b)), tokens.get((n, b), [])) for b in budgets} for n in names
    }
    view = BudgetView(budgets, headline_budget(budgets, unconstrained), cells)
    for budget in budgets:
        at = {n: outcomes[(n, budget)] for n in names if (n, budget) in outcomes}
        view.pairs[budget] = budget_pairs(at, scored, clusters)
    return view


def budget_pairs(
    outcomes: dict[str, Outcomes], scored: Questions, clusters: Sequence[int] | None = None
) -> list[PairRow]:
    """Every pair of arms at one budget: exact McNemar per question, Holm over the budget.

    One budget is one family. With `clusters`, each test also carries its clustered
    counterpart (exact sign-flip over clusters, bootstrap interval; bench.summarise.
    clustered), Holm-adjusted as a second family within the budget, as the
    unconstrained pairs are.
    """
    rows = [
        PairRow(a, b, SET, paired(outcomes[a], outcomes[b], scored, clusters, interval=True), {})
        for a, b in combinations(outcomes, 2)
    ]
    apply_holm(rows)
    return rows


def headline_budget(budgets: list[int], unconstrained: dict[str, Any]) -> int:
    """The largest budget at most every arm's mean unconstrained context, else the smallest."""
    sizes = [v for v in unconstrained.values() if isinstance(v, int | float)]
    fits = [b for b in budgets if sizes and b <= min(sizes)]
    return max(fits) if fits else budgets[0]


def _cell(outcome: Outcomes | None, tokens: list[int]) -> BudgetCell:
    if outcome is None:
        return BudgetCell(Rate(0, 0), None)
    got, missed = outcome
    mean = sum(tokens) / len(tokens) if tokens else None
    return BudgetCell(Rate(len(got), len(got) + len(missed)), mean)


def coverage_rows(
    records: list[QuestionRecord], names: list[str], scored: Questions, meta: RunMeta | None
) -> list[CoverageRow]:
    """Each arm's coverage of the haystack over the scored questions (empty when unknown)."""
    sizes = conversation_sizes(records, meta)
    if not sizes:
        return []
    shares: dict[str, list[float]] = {n: [] for n in names}
    for i in scored:
        record = records[i]
        size = sizes.get(record.conversation_id)
        for name, result in record.arms.items():
            if size and name in shares and result.status == OK and result.context_tokens:
                shares[name].append(min(1.0, result.context_tokens / size))
    return [_coverage(name, values) for name, values in shares.items()]


def _coverage(name: str, values: list[float]) -> CoverageRow:
    mean = sum(values) / len(values) if values else None
    return CoverageRow(name, len(values), mean, sum(v >= NEAR_FULL for v in values))


def conversation_sizes(records: Iterable[QuestionRecord], meta: RunMeta | None) -> dict[str, int]:
    """Unit -> whole-transcript tokens: run.json's, else an untruncated raw arm's context."""
    given = meta.conversation_tokens if meta else {}
    sizes = {k: v for k, v in given.items() if v.__class__ is int and v > 0}
    if sizes or meta is None:
        return sizes
    raw = [a for a in meta.arms if meta.arm_option(a, "kind") == "raw"]
    for record in records:
        for name in raw:
            result = record.arms.get(name)
            tokens = result.context_tokens if result and result.status == OK else None
            if tokens.__class__ is int and tokens and result and not result.context_truncated:
                sizes[record.conversation_id] = tokens
    return sizes
