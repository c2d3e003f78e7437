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

from dataclasses import dataclass

from bench.records import OK, QuestionRecord
from bench.summarise.model import SCORED_CATEGORIES, Rate
from bench.summarise.stats import mean

OFFLINE_CAUTION = (
    "Caution: a pipeline check and a reachability measure, not a proxy for LLM accuracy "
    "(published LLM-judged LoCoMo ranks raw > rag > tuned > neuromorphic; the offline "
    "reader agrees with it on 33% of raw-arm questions; see README)"
)
"""The one-line caution every offline summary prints."""


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


def reach_rows(records: list[QuestionRecord], arms: list[str], locomo_style: bool) -> list[Reach]:
    """Accuracy, evidence recall and gold-token recall per arm (empty when nothing to show)."""
    scored = [
        r for r in records if r.gold and (not locomo_style or r.category in SCORED_CATEGORIES)
    ]
    rows = []
    for name in arms:
        results = [(r, res) for r in scored if (res := r.arms.get(name)) and res.status == OK]
        counted = [res.correct for _, res in results if res.correct is not None]
        reported = any(res.retrieved_ids for _, res in results)
        recalls = [
            sum(e in set(res.retrieved_ids) for e in r.evidence) / len(r.evidence)
            for r, res in results
            if r.evidence and reported
        ]
        golds = [
            float(v)
            for _, res in results
            if isinstance(v := res.scores.get("gold_token_recall"), int | float)
        ]
        rows.append(Reach(name, Rate(sum(counted), len(counted)), mean(recalls), mean(golds)))
    if all(r.evidence_recall is None and r.gold_token_recall is None for r in rows):
        return []
    return rows


def render_reach(rows: list[Reach]) -> list[str]:
    """Markdown lines of the reachability table."""
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
            f"| {r.name} | {pct(r.accuracy.value)} (n={r.accuracy.n}) | "
            f"{pct(r.evidence_recall)} | {pct(r.gold_token_recall)} |"
        )
    return out
