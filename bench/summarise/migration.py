"""Judge migration: the same answers under two judges, per category, as a measured step.

When a run is re-judged with another judge (a retired judge's successor, the official
judge beside armbench's), every earlier verdict stays in the records, so each pair of
LLM judges can be compared on the answers both judged. Per pair and per group (LoCoMo
category or LongMemEval type, plus `all`), over (question, arm) answers with an `ok`
result and a verdict from both:

- accuracy under each judge (share accepted);
- Cohen's κ of the two (`bench.summarise.stats.cohen_kappa`);
- flips: right under A but wrong under B (A✓B✗), and the reverse (A✗B✓);
- the exact McNemar p of the flips (`bench.summarise.stats.mcnemar_exact_p`): small p
  means the switch moves accuracy beyond what its discordant answers allow by chance.

A judge with several runs (`<id>#<k>`) is one rater: the majority of its runs
(`bench.scoring.judge_runs.group_verdict`). Shown only when two or more LLM judges have
verdicts. Standard library only.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from itertools import combinations

from bench.records import OK, QuestionRecord
from bench.scoring.judge_runs import group_verdict, split_run_id
from bench.summarise.model import group_label
from bench.summarise.stats import cohen_kappa, mcnemar_exact_p

ALL = "all"


@dataclass(frozen=True)
class MigrationRow:
    """Two judges on the answers both judged, within one group."""

    judge_a: str
    """The first judge (sorted ids)."""
    judge_b: str
    """The second judge."""
    group: str
    """LoCoMo category or LongMemEval type, or `all`."""
    n: int
    """Answers with a verdict from both."""
    accepted_a: int
    """Answers judge A accepted."""
    accepted_b: int
    """Answers judge B accepted."""
    a_only: int
    """Right under A, wrong under B."""
    b_only: int
    """Wrong under A, right under B."""
    kappa: float | None
    """Cohen's κ of the two judges; None when undefined."""

    @property
    def p(self) -> float:
        """Exact McNemar p of the flips."""
        return mcnemar_exact_p(self.a_only, self.b_only)


def _ratings(
    records: list[QuestionRecord], locomo_style: bool
) -> list[tuple[str, dict[str, bool]]]:
    """(group key, judge -> verdict) per `ok` answer with at least one verdict."""
    out = []
    for record in records:
        key = str(record.category) if locomo_style else (record.question_type or "?")
        for result in record.arms.values():
            if result.status != OK or not result.judgements:
                continue
            bases = {split_run_id(jid)[0] for jid in result.judgements}
            row = {b: v for b in bases if (v := group_verdict(result.judgements, b)) is not None}
            if row:
                out.append((key, row))
    return out


def migration_rows(records: list[QuestionRecord], locomo_style: bool) -> list[MigrationRow]:
    """Every pair of judges (sorted ids) per group and `all`; empty with fewer than two."""
    ratings = _ratings(records, locomo_style)
    judges = sorted({j for _, row in ratings for j in row})
    rows = []
    for a, b in combinations(judges, 2):
        pairs: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
        for key, row in ratings:
            if a in row and b in row:
                pairs[ALL].append((row[a], row[b]))
                pairs[key].append((row[a], row[b]))
        for group in [ALL, *sorted(k for k in pairs if k != ALL)]:
            both = pairs.get(group, [])
            if not both:
                continue
            rows.append(
                MigrationRow(
                    a,
                    b,
                    group,
                    len(both),
                    sum(x for x, _ in both),
                    sum(y for _, y in both),
                    sum(x and not y for x, y in both),
                    sum(y and not x for x, y in both),
                    cohen_kappa(both)[0],
                )
            )
    return rows


def render_migration(rows: list[MigrationRow], locomo_style: bool) -> list[str]:
    """The Markdown section, or nothing without a pair of judges."""
    if not rows:
        return []
    head = "| judge A → judge B | group | n | acc A | acc B | κ | A✓B✗ | A✗B✓ | McNemar p |"
    lines = [head, "|" + "---|" * 9]
    for r in rows:
        label = ALL if r.group == ALL else group_label(r.group, locomo_style=locomo_style)
        kappa = "—" if r.kappa is None else f"{r.kappa:.3f}"
        lines.append(
            f"| {r.judge_a} → {r.judge_b} | {label} | {r.n} | {100 * r.accepted_a / r.n:.1f}% | "
            f"{100 * r.accepted_b / r.n:.1f}% | {kappa} | {r.a_only} | {r.b_only} | {r.p:.3g} |"
        )
    note = (
        "Answers judged by both judges (a judge with runs: their majority). A✓B✗: right "
        "under A, wrong under B. McNemar p: exact test of the flips (small p: the change of "
        "judge moves accuracy)."
    )
    return ["", "## Judge migration (same answers, two judges)", "", *lines, "", note]
