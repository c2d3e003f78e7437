"""One `Question -> QuestionRecord` builder: what a record says of its question.

`bench.run` (one record per question, every arm's result) and `bench.published` (one
imported arm's result) both build records here, so an imported record carries the same
question fields as a run's: the dataset's gold and evidence, the adversarial answer and
question type, BEAM's rubric and difficulty, and the answer-key audit's entry (errata
type, corrected gold and evidence) when the dataset was loaded with errata.
"""

from __future__ import annotations

from collections.abc import Mapping

from bench.records import ArmResult, QuestionRecord
from bench.types import Question


def question_record(
    question: Question,
    dataset: str,
    arms: dict[str, ArmResult],
    provenance: Mapping[str, object],
) -> QuestionRecord:
    """The record of `question` in dataset `dataset` holding `arms`, `provenance` stamped."""
    fix = question.correction
    return QuestionRecord(
        question_id=question.question_id,
        dataset=dataset,
        conversation_id=question.conversation_id,
        category=question.category,
        question=question.question,
        gold=question.gold,
        evidence=list(question.evidence),
        adversarial_answer=question.adversarial_answer,
        question_type=question.question_type,
        arms=arms,
        provenance=dict(provenance),
        rubric=list(question.rubric) or None,
        difficulty=question.difficulty,
        errata_type=fix.error_type if fix else None,
        corrected_gold=fix.gold if fix else None,
        corrected_evidence=list(fix.evidence) if fix else None,
    )
