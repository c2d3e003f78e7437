"""Repeated judge runs: per-run accuracy, mean ± SD over runs, majority of R. Stdlib only.

A judge run is a set of verdicts stored under `<base>#<k>` (k = 1..R): the three
gpt-4o-mini runs of an imported EverMemOS file (`published:gpt-4o-mini#1..#3`), or R
live runs of one judge. For each arm and base with at least two runs, over the scored
questions on which every run gave a verdict (the same questions for every run, so the
runs are comparable):

    acc_k  = (verdicts of run k that say correct) / n
    mean   = Σ_k acc_k / R
    SD     = √(Σ_k (acc_k − mean)² / R)           population SD (divisor R)
    majority = (questions that more than R/2 runs call correct) / n

The divisor R, not R − 1, is what the published EverMemOS metadata uses: its
`std_accuracy` and per-category `std` equal `statistics.pstdev` of its `run_scores`
(checked in tests/published/test_published.py), so the view reproduces the published figures.
The same numbers are given per category (per question type elsewhere).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from bench.records import OK, QuestionRecord

_RUN_ID = re.compile(r"(.+)#(\d+)")


@dataclass
class RunsStats:
    """One arm's judge runs on one set of questions."""

    n: int
    """Questions every run judged."""
    per_run: list[float]
    """Accuracy of each run, in run order."""
    mean: float
    """Mean of `per_run`."""
    sd: float
    """Population SD of `per_run` (divisor R, as published)."""
    majority: float
    """Share of questions more than half of the runs call correct."""


@dataclass
class JudgeRuns:
    """Every figure of one arm's runs of one judge."""

    arm: str
    """The arm judged."""
    base: str
    """The judge id the runs share (`published:gpt-4o-mini`)."""
    runs: list[str]
    """The run ids, in run order."""
    overall: RunsStats
    """Over the scored questions."""
    groups: dict[str, RunsStats] = field(default_factory=dict)
    """Per category (question type), in display order."""


def judge_runs_view(
    records: list[QuestionRecord], arms: list[str], group_of: dict[str, str], scored: list[str]
) -> list[JudgeRuns]:
    """The judge-run groups of every arm (empty when no result holds `<id>#<k>` runs).

    `group_of`: question id -> group key; `scored`: the scored group keys, in order.
    """
    keep = set(scored)
    out = []
    for arm in arms:
        verdicts = _verdicts(records, arm, group_of, keep)
        for base in sorted(verdicts):
            runs = _run_ids(verdicts[base])
            if len(runs) < 2:
                continue
            rows = [
                (group, [table[r] for r in runs])
                for group, table in verdicts[base].values()
                if all(r in table for r in runs)
            ]
            overall = _stats([v for _, v in rows])
            if overall is None:
                continue
            groups = {g: _stats([v for key, v in rows if key == g]) for g in scored}
            shown = {g: s for g, s in groups.items() if s is not None}
            out.append(JudgeRuns(arm, base, runs, overall, shown))
    return out


def _verdicts(
    records: list[QuestionRecord], arm: str, group_of: dict[str, str], keep: set[str]
) -> dict[str, dict[str, tuple[str, dict[str, bool]]]]:
    """Judge base -> question id -> (group, run id -> verdict) of an arm's `ok` verdicts."""
    out: dict[str, dict[str, tuple[str, dict[str, bool]]]] = {}
    for record in records:
        result = record.arms.get(arm)
        group = group_of.get(record.question_id)
        if result is None or result.status != OK or not result.judgements or group not in keep:
            continue
        for jid, judgement in result.judgements.items():
            found = _RUN_ID.fullmatch(jid)
            if found is None or judgement.status != OK or judgement.verdict is None:
                continue
            per_q = out.setdefault(found.group(1), {})
            per_q.setdefault(record.question_id, (group, {}))[1][jid] = bool(judgement.verdict)
    return out


def _run_ids(table: dict[str, tuple[str, dict[str, bool]]]) -> list[str]:
    """Every run id seen, ordered by run number."""
    seen = {jid for _, runs in table.values() for jid in runs}
    return sorted(seen, key=lambda jid: int(jid.rpartition("#")[2]))


def _stats(rows: list[list[bool]]) -> RunsStats | None:
    """Per-run accuracy, mean, population SD and majority of questions' verdict rows."""
    n = len(rows)
    if not n:
        return None
    count = len(rows[0])
    per_run = [sum(row[k] for row in rows) / n for k in range(count)]
    mean = math.fsum(per_run) / count
    sd = math.sqrt(math.fsum((a - mean) ** 2 for a in per_run) / count)
    majority = sum(2 * sum(row) > count for row in rows) / n
    return RunsStats(n, per_run, mean, sd, majority)


def render_judge_runs(view: list[JudgeRuns], labels: dict[str, str]) -> list[str]:
    """The Markdown section: one row per arm and judge, then per category."""
    if not view:
        return []
    header = "| arm | judge runs | set / group | n | per run | mean ± SD (pop.) | majority |"
    lines = ["", "## Judge runs (mean over runs and majority of R)", "", header]
    lines.append("|" + "---|" * 7)
    for item in view:
        name = f"{item.base}#1..#{len(item.runs)}"
        rows = [("scored", item.overall)] + [
            (f"{k} {labels.get(k, '')}".strip() if k.isdigit() else labels.get(k, k), s)
            for k, s in item.groups.items()
        ]
        for where, s in rows:
            runs = ", ".join(f"{100 * a:.2f}%" for a in s.per_run)
            lines.append(
                f"| {item.arm} | {name} | {where} | {s.n} | {runs} | "
                f"{100 * s.mean:.2f}% ± {100 * s.sd:.2f} | {100 * s.majority:.2f}% |"
            )
    return lines


def judge_runs_json(view: list[JudgeRuns]) -> list[dict[str, Any]]:
    """The JSON form (`--json`: key `judge_runs`)."""
    from dataclasses import asdict

    return [asdict(item) for item in view]
