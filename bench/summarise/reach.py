"""Reachability beside accuracy: was the gold answer in the context at all?

Standard library only. Per arm, over the questions that have a gold answer (LoCoMo:
categories 1–4):

- evidence recall = mean |evidence ∩ retrieved ids| / |evidence| over questions with
  evidence (None for arms that report no source ids, e.g. the whole transcript);
- gold-token recall = mean of `scores["gold_token_recall"]` (`bench.scoring.reach`).

On offline runs these say what the extractive reader could reach; accuracy says how
much of that a deliberately simple reader got.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bench.records import OK, ArmResult, QuestionRecord
from bench.scoring.rules import SCORED_CATEGORIES
from bench.summarise.stats import Rate, mean


@dataclass(frozen=True)
class Reach:
    """One arm's accuracy beside its reachability figures."""

    name: str
    """The arm's name."""
    accuracy: Rate
    """Correct / judged on the questions with a gold answer."""
    evidence_recall: float | None
    """Mean share of evidence ids retrieved; None without source ids."""
    gold_token_recall: float | None
    """Mean share of gold-answer tokens in the context; None without any."""


def evidence_recall(retrieved: list[str], evidence: list[str] | None) -> float | None:
    """|evidence ∩ retrieved| / |evidence|, evidence ids counted with repeats; None if none.

    One evidence id (most LoCoMo questions) is a membership test of the retrieved list.
    """
    if not evidence:
        return None
    if len(evidence) == 1:
        return 1.0 if evidence[0] in retrieved else 0.0
    got = set(retrieved)
    return sum(map(got.__contains__, evidence)) / len(evidence)


class ReachTally:
    """One arm's running counts on the questions with a gold answer."""

    __slots__ = ("golds", "k", "n", "recalls", "reported")

    def __init__(self) -> None:
        self.k = 0
        self.n = 0
        self.reported = False
        self.recalls: list[float] = []
        self.golds: list[float] = []

    def add(self, res: ArmResult, recall: float | None) -> None:
        """Count one `ok` result on a question with a gold answer.

        `recall`: `evidence_recall` of the result on the question's evidence, computed
        once by the caller (the errata tally counts the same figure).
        """
        if res.correct is not None:
            self.n += 1
            self.k += bool(res.correct)
        if res.retrieved_ids:
            self.reported = True
        if recall is not None:
            self.recalls.append(recall)
        value = res.scores.get("gold_token_recall")
        if isinstance(value, (int, float)):
            self.golds.append(float(value))

    def row(self, name: str) -> Reach:
        """The arm's Reach (evidence recall unknown unless some result listed source ids)."""
        recalls = self.recalls if self.reported else []
        return Reach(name, Rate(self.k, self.n), mean(recalls), mean(self.golds))


def has_gold(record: QuestionRecord, locomo_style: bool) -> bool:
    """The question counts for reachability: a gold answer (and LoCoMo category 1–4)."""
    return bool(record.gold) and (not locomo_style or record.category in SCORED_CATEGORIES)


def reach_view(rows: list[Reach]) -> list[Reach]:
    """The rows, or none when no arm has an evidence or gold-token recall to show."""
    if all(r.evidence_recall is None and r.gold_token_recall is None for r in rows):
        return []
    return rows


def reach_rows(records: list[QuestionRecord], arms: list[str], locomo_style: bool) -> list[Reach]:
    """Accuracy, evidence recall and gold-token recall per arm (empty when nothing to show)."""
    scored = [r for r in records if has_gold(r, locomo_style)]
    rows = []
    for name in arms:
        tally = ReachTally()
        for r in scored:
            res = r.arms.get(name)
            if res is not None and res.status == OK:
                tally.add(res, evidence_recall(res.retrieved_ids, r.evidence))
        rows.append(tally.row(name))
    return reach_view(rows)


def render_reach(rows: list[Reach], label: Callable[[str], str] = str) -> list[str]:
    """Markdown lines of the reachability table (`label`: an arm's shown name, with flags)."""
    if not rows:
        return []

    def pct(v: float | None) -> str:
        return "—" if v is None else f"{100 * v:.1f}%"

    out = [
        "",
        "## Reachability beside accuracy (questions with a gold answer)",
        "",
        "| arm | accuracy | evidence recall | gold-token recall |",
        "|---|---|---|---|",
    ]
    for r in rows:
        out.append(
            f"| {label(r.name)} | {pct(r.accuracy.value)} (n={r.accuracy.n}) | "
            f"{pct(r.evidence_recall)} | {pct(r.gold_token_recall)} |"
        )
    return out
