"""LongMemEval's own headline metrics, as its `print_qa_metrics.py` reports them, per arm.

Upstream (xiaowu0162/LongMemEval `src/evaluation/print_qa_metrics.py`) takes one 0/1
label per question (the official judge's verdict) and prints:

- accuracy per question type (six types, `_abs` questions counted inside their type);
- task-averaged accuracy = the mean of the per-type accuracies (LongMemEval's headline);
- overall accuracy = correct / all questions;
- abstention accuracy = correct / questions whose id contains `_abs`.

Here the label is each result's `correct` (the run's outcome: the primary judge, or the
F1 rule when there is none — the header says which); results without an outcome
(errors, missing verdicts) are left out and counted. One deviation, stated in the
table: upstream averages over all six types and prints `nan` when a type has no
questions (a subset run); here the task average is over the types present, and the
table says how many of the six that is. Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bench.records import OK, QuestionRecord

UPSTREAM_TYPES = (
    "single-session-user",
    "single-session-preference",
    "single-session-assistant",
    "multi-session",
    "temporal-reasoning",
    "knowledge-update",
)
"""The six question types upstream reports, in its order."""
ABSTENTION_MARK = "_abs"


@dataclass
class LmeMetrics:
    """One arm's LongMemEval metrics (counts; rates are derived)."""

    by_type: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Question type -> (correct, counted)."""
    abstention: tuple[int, int] = (0, 0)
    """(correct, counted) over `_abs` questions."""
    uncounted: int = 0
    """Results without an outcome (error, missing, no verdict): left out."""

    @property
    def overall(self) -> float | None:
        """Correct / counted over every type."""
        k = sum(c for c, _ in self.by_type.values())
        n = sum(n for _, n in self.by_type.values())
        return k / n if n else None

    @property
    def task_averaged(self) -> float | None:
        """Mean of the per-type accuracies over the types with counted questions."""
        rates = [c / n for c, n in self.by_type.values() if n]
        return sum(rates) / len(rates) if rates else None


def longmemeval_metrics(records: list[QuestionRecord], arms: list[str]) -> dict[str, LmeMetrics]:
    """Per arm, the counts behind upstream's metrics (records without a type are skipped)."""
    out = {arm: LmeMetrics() for arm in arms}
    for record in records:
        qtype = record.question_type
        if qtype is None:
            continue
        is_abs = ABSTENTION_MARK in record.question_id
        for arm, metrics in out.items():
            result = record.arms.get(arm)
            if result is None or result.status != OK or result.correct is None:
                metrics.uncounted += 1
                continue
            right = int(result.correct is True)
            k, n = metrics.by_type.get(qtype, (0, 0))
            metrics.by_type[qtype] = (k + right, n + 1)
            if is_abs:
                metrics.abstention = (metrics.abstention[0] + right, metrics.abstention[1] + 1)
    return out


def longmemeval_json(metrics: dict[str, LmeMetrics]) -> dict[str, Any]:
    """Per arm: upstream's metrics and the counts behind them."""
    return {
        arm: {
            "task_averaged": m.task_averaged,
            "overall": m.overall,
            "abstention": {"correct": m.abstention[0], "n": m.abstention[1]},
            "by_type": {t: {"correct": k, "n": n} for t, (k, n) in m.by_type.items()},
            "not_counted": m.uncounted,
        }
        for arm, m in metrics.items()
    }


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def _cell(counts: tuple[int, int] | None) -> str:
    if not counts or not counts[1]:
        return "—"
    return f"{100 * counts[0] / counts[1]:.1f}% ({counts[1]})"


def render_longmemeval(metrics: dict[str, LmeMetrics], outcome: str) -> list[str]:
    """The Markdown section: one row per arm, upstream's columns."""
    if not metrics or not any(m.by_type for m in metrics.values()):
        return []
    present = [t for t in UPSTREAM_TYPES if any(t in m.by_type for m in metrics.values())]
    extra = sorted({t for m in metrics.values() for t in m.by_type} - set(UPSTREAM_TYPES))
    types = [*present, *extra]
    header = ["arm", "task-averaged", "overall", "abstention", *types, "not counted"]
    rows = [
        [
            arm,
            _pct(m.task_averaged),
            _pct(m.overall),
            _cell(m.abstention),
            *(_cell(m.by_type.get(t)) for t in types),
            str(m.uncounted),
        ]
        for arm, m in metrics.items()
    ]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    note = (
        f"Labels: each result's outcome ({outcome}); LongMemEval's published numbers use "
        f"`judge:longmemeval_official` with gpt-4o-2024-08-06. Task-averaged over "
        f"{len(present)} of upstream's {len(UPSTREAM_TYPES)} types (upstream prints nan "
        "when a type has no questions); (n) = results counted."
    )
    return ["", "## LongMemEval metrics (as print_qa_metrics.py)", "", *lines, "", note]
