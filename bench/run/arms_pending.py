"""Which arms of a question's record still need an answer or a verdict (the resume rule).

One rule for the full path (`bench.run.conversation`) and the records-only check
(`bench.run.resume`): a record is complete only when every requested arm is `ok`, every
judge has a verdict, every repeat is drawn and every context budget answered.
"""

from __future__ import annotations

from collections.abc import Sequence

from bench.answer.repeat_plan import RepeatPlan
from bench.answer.repeats import pending
from bench.judge.protocol import JudgeIdentity
from bench.records import OK, ArmResult, QuestionRecord
from bench.run.budgets import pending as budgets_pending


def arms_to_run(
    record: QuestionRecord | None,
    arms: list[str],
    judges: Sequence[JudgeIdentity],
    rejudge: bool,
    repeats: RepeatPlan | None = None,
    budgets: tuple[int, ...] = (),
) -> tuple[list[str], list[str]]:
    """(arms needing an answer, arms needing only judging) for a question's record.

    With a `repeats` plan (`bench.answer.repeats.RepeatPlan`), an arm whose repeats are
    incomplete is answered again: finished draws come back from the response cache; so is
    one lacking a context budget (`bench.run.budgets`, finished ones kept). An
    imported result (`ArmResult.imported`, `bench.published`) is in neither list.
    """
    from bench.judge.judges import needs_judgement

    if record is None:
        return list(arms), []
    answer, judge = [], []
    for name in arms:
        result = record.arms.get(name)
        if result is not None and result.imported is not None:
            continue  # a published result: never re-answered, never re-judged
        if (
            result is None
            or result.status != OK
            or draws_pending(result, repeats, judges)
            or budgets_pending(result, budgets, judges)
        ):
            answer.append(name)
        elif any(needs_judgement(result, j, rejudge=rejudge) for j in judges):
            judge.append(name)
    return answer, judge


def draws_pending(
    result: ArmResult, plan: RepeatPlan | None, judges: Sequence[JudgeIdentity]
) -> bool:
    """True when a `repeats=N` plan still lacks draws of this result (bench.answer.repeats)."""
    return plan is not None and pending(result, plan, judges)
