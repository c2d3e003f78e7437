"""Score an answer a second time, against the answer-key audit's corrected gold.

Only score-affected questions (`Correction.score_affected`) get a second score; every
other question's corrected outcome is its official one, so nothing is computed twice.

- F1 rule: the official metrics (`score_answer`) recomputed with the corrected gold, kept
  as `scores["f1_corrected"]` / `scores["em_corrected"]`; `correct_corrected` is the
  same rule (`f1 >= threshold`) applied to them.
- LLM judges: each judge asked again with the corrected gold in its rubric, verdicts in
  `corrected_judgements`; the primary judge's verdict becomes `correct_corrected`
  (`bench.judge.judges.with_corrected_judgements`, which asks with `corrected_question`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from bench.records import OK, ArmResult
from bench.scoring.locomo import outcome_from_f1, score_answer
from bench.types import ErrataSource, Question


def corrected_question(question: Question) -> Question | None:
    """The question with the corrected gold and evidence; None unless the score changes."""
    fix = question.correction
    if fix is None or not fix.score_affected:
        return None
    return replace(question, gold=fix.gold, evidence=fix.evidence)


def with_corrected_scores(result: ArmResult, question: Question, threshold: float) -> ArmResult:
    """Add `f1_corrected`, `em_corrected` and `correct_corrected` (F1 rule) when affected."""
    fixed = corrected_question(question)
    if fixed is None or result.status != OK or result.answer is None:
        return result
    again = score_answer(result.answer, fixed)
    scores = {**result.scores, "f1_corrected": again["f1"], "em_corrected": again["em"]}
    return replace(
        result, scores=scores, correct_corrected=outcome_from_f1(again, fixed, threshold)
    )


def errata_meta(source: ErrataSource | None) -> dict[str, Any]:
    """The `DatasetMeta` fields naming the applied audit (empty when errata are off)."""
    if source is None:
        return {}
    return {
        "errata_path": source.path,
        "errata_sha256": source.sha256,
        "errata_entries": source.entries,
        "errata_score_affected": source.score_affected,
    }


__all__ = [
    "corrected_question",
    "errata_meta",
    "with_corrected_scores",
]
