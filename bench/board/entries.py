"""The leaderboard's entries: one per arm of every run, grouped by scale and question set.

An entry is one arm of one run directory (a `bench.run` run, an imported published
result, a merged run): its accuracy on the scored questions (LoCoMo categories 1-4,
every question elsewhere) on its own scale, its judge and calibration, cost per correct
answer, mean context size and the publishable verdict with its reason codes, all from
the summariser (`bench.summarise`), never recomputed.

**Groups.** Entries are ranked only against entries on the same scale (outcome rule and
judge model, `bench.summarise.scales`) and the same question set (the scored questions
the arm has a result for); any other entry is in another group, never in one ranking.

**Pairing.** Within a group every entry is paired with the top entry (highest accuracy;
ties by run and arm name) on the questions both have an outcome for: b = right only in
the top entry, c = right only in this one, the exact two-sided McNemar p
(`bench.summarise.stats.mcnemar_exact_p`). `PAIRED_TESTS` is the hook for more paired
tests (the clustered test of the clustering issue registers there: it gets the paired
outcomes and each question's conversation, its cluster).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from bench.records import OK, QuestionRecord
from bench.scoring.rules import SCORED_CATEGORIES
from bench.summarise.model import Summary
from bench.summarise.scales import rule_judge
from bench.summarise.stats import Rate, mcnemar_exact_p
from bench.summarise.verdict import (
    JUDGE_LENIENT,
    JUDGE_STRICT,
    JUDGE_UNCALIBRATED,
    JUDGE_UNINFORMATIVE,
)

Pairs = list[tuple[bool, bool]]
"""(top entry right, this entry right) per shared question."""
PairedTest = Callable[[Pairs, list[str]], float | None]
"""A paired test: the outcomes and each question's cluster (conversation) -> p, or None."""
PAIRED_TESTS: dict[str, PairedTest] = {
    "McNemar exact p": lambda pairs, _clusters: mcnemar_exact_p(
        sum(a and not b for a, b in pairs), sum(b and not a for a, b in pairs)
    ),
}
"""Name -> paired test, each a column of the board (the clustered test is added here)."""
_CALIBRATION_CODES = (JUDGE_UNCALIBRATED, JUDGE_UNINFORMATIVE, JUDGE_STRICT, JUDGE_LENIENT)


@dataclass
class Entry:
    """One arm of one run on the board."""

    run: str
    """The run directory's name."""
    arm: str
    """The arm."""
    scale: str
    """Outcome rule and judge model (`f1>=0.5`, `judge:llm (gpt-4o-mini)`)."""
    calibration: str
    """`—` (no judge), `on file`, or the calibration reason codes against the judge."""
    accuracy: Rate
    """Correct of the scored results that count."""
    cost: str
    """Cost per correct answer (money when priced, else tokens), `—` when unknown."""
    context_tokens: float | None
    """Mean context size in tokens."""
    publishable: bool
    """The arm's verdict."""
    reasons: list[str]
    """The reason codes against it."""
    outcomes: dict[str, bool] = field(default_factory=dict)
    """Scored question id -> right, for results that count."""
    clusters: dict[str, str] = field(default_factory=dict)
    """Question id -> its conversation (the cluster of a clustered test)."""
    questions: frozenset[str] = frozenset()
    """Scored question ids the arm has a result for (ok or error)."""
    rank: int = 0
    """Place in its group (1 = top)."""
    paired: dict[str, float | None] = field(default_factory=dict)
    """Against the group's top entry: `n`, `top only`, `this only` and each test's p."""

    @property
    def group_key(self) -> tuple[str, str]:
        """(scale, question-set hash): entries are ranked within one key only."""
        digest = hashlib.sha256("\n".join(sorted(self.questions)).encode()).hexdigest()
        return self.scale, digest[:12]


def entries_of(run_dir: Path, summary: Summary, records: list[QuestionRecord]) -> list[Entry]:
    """Every arm of one summarised run as an entry."""
    out = []
    for arm, stats in summary.arms.items():
        codes = summary.verdict.arm_codes(arm)
        scale = summary.verdict.scales.get(arm, summary.outcome)
        found = [c for c in codes if c in _CALIBRATION_CODES]
        judged = rule_judge(scale.split(" ", 1)[0]) is not None
        entry = Entry(
            run=run_dir.resolve().name,
            arm=arm,
            scale=scale,
            calibration=", ".join(found) or ("on file" if judged else "—"),
            accuracy=stats.accuracy["scored"],
            cost=_cost(summary, arm),
            context_tokens=stats.context_tokens_mean,
            publishable=not codes,
            reasons=codes,
        )
        _outcomes(entry, records, summary.locomo_style)
        out.append(entry)
    return out


def _outcomes(entry: Entry, records: list[QuestionRecord], locomo_style: bool) -> None:
    """Fill the entry's scored outcomes, clusters and question set from the records."""
    questions = set()
    for record in records:
        res = record.arms.get(entry.arm)
        if res is None or (locomo_style and record.category not in SCORED_CATEGORIES):
            continue
        questions.add(record.question_id)
        entry.clusters[record.question_id] = record.conversation_id
        if res.status == OK and res.correct is not None:
            entry.outcomes[record.question_id] = bool(res.correct)
    entry.questions = frozenset(questions)


def _cost(summary: Summary, arm: str) -> str:
    """Money per correct answer when priced, else tokens; `—` when unknown."""
    rows = [r for r in (summary.cost.arms if summary.cost else []) if r.name == arm]
    for row in sorted(rows, key=lambda r: r.unit != "money"):
        if row.value is not None:
            return f"${row.value:.4f}" if row.unit == "money" else f"{row.value:,.0f} tokens"
    return "—"


def grouped(entries: list[Entry]) -> list[list[Entry]]:
    """Groups of one scale and question set, each ranked and paired with its top entry."""
    groups: dict[tuple[str, str], list[Entry]] = {}
    for entry in entries:
        groups.setdefault(entry.group_key, []).append(entry)
    out = []
    for members in groups.values():
        members.sort(key=lambda e: (-(e.accuracy.value or 0.0), e.run, e.arm))
        top = members[0]
        for rank, entry in enumerate(members, 1):
            entry.rank = rank
            if entry is not top:
                entry.paired = paired_with(top, entry)
        out.append(members)
    return sorted(out, key=lambda g: (g[0].scale, -len(g[0].questions)))


def paired_with(top: Entry, entry: Entry) -> dict[str, float | None]:
    """`n`, `top only`, `this only` and every `PAIRED_TESTS` p on the shared questions."""
    shared = sorted(top.outcomes.keys() & entry.outcomes.keys())
    pairs = [(top.outcomes[q], entry.outcomes[q]) for q in shared]
    clusters = [entry.clusters[q] for q in shared]
    out: dict[str, float | None] = {
        "n": len(pairs),
        "top only": sum(a and not b for a, b in pairs),
        "this only": sum(b and not a for a, b in pairs),
    }
    out.update({name: test(pairs, clusters) for name, test in PAIRED_TESTS.items()})
    return out
