"""`context_budgets=[256,512,...]`: every arm answered again with its context cut to each B.

The cut is the budget rule of `bench.context_budget` (methodology §3.5), applied to the
context the arm already returned (or `phase=predict` stored): no new ingestion, no new
retrieval, so `phase=evaluate context_budgets=[...]` adds budgets to a finished predicted
run. Each budget is one more answer and, per judge, one more verdict, made with the run's
prompt, answerer and outcome rule; the primary judge (else the F1 rule) sets `correct`.

Storage: the answers live inside the arm's result (`ArmResult.budgets`, smallest budget
first), in the one record per question, so pairing at a budget is by construction. A run
without budgets writes no `budgets` key: its records are unchanged.

Resume: a budget that is missing, in `error` or lacks a current judge's verdict is
answered again; the arm's finished budgets and its unconstrained answer are kept.
A live arm whose service answered itself (`Context.service_answer`) is answered at a
budget by the harness's answerer over the cut text: no budget can cut the context the
service read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from bench.config import RunConfig
from bench.context_budget import cut_context
from bench.errors import ConfigError
from bench.judge.protocol import JudgeIdentity, judge_run_ids
from bench.records import ERROR, OK, ArmResult, BudgetResult, Judgement
from bench.scoring.judge_runs import group_verdict

if TYPE_CHECKING:
    from bench.answer.answer_step import AnswerStep
    from bench.types import Context, Question

DONE = (OK, "skipped", "unparseable")
"""Verdict statuses a budget needs no new call for (as `needs_judgement` counts them)."""


def plan_budgets(cfg: RunConfig) -> tuple[int, ...]:
    """`context_budgets`, sorted; ConfigError (one line) unless whole numbers > 0, no repeats."""
    given = list(cfg.context_budgets or [])
    bad = [b for b in given if isinstance(b, bool) or not isinstance(b, int) or b <= 0]
    if bad or len(set(given)) != len(given):
        raise ConfigError(
            f"context_budgets={given!r}: expected distinct whole numbers of tokens > 0 "
            "(e.g. context_budgets=[256,512,1024,2048,4096])"
        )
    return tuple(sorted(given))


def current(judgements: dict[str, Judgement], judge: JudgeIdentity) -> bool:
    """True when `judgements` hold a finished verdict by this judge's model and prompt."""
    old = judgements.get(judge.judge_id)
    return (
        old is not None
        and old.status in DONE
        and (old.model, old.prompt_hash) == (judge.model, judge.prompt_hash)
    )


def pending(result: ArmResult, budgets: Sequence[int], judges: Sequence[JudgeIdentity]) -> bool:
    """True when an `ok` result lacks an `ok` budget judged by every current judge."""
    if not budgets or result.status != OK:
        return False
    done = {b.budget: b for b in result.budgets if b.status == OK}
    return any(
        b not in done or not all(current(done[b].judgements, j) for j in judges) for b in budgets
    )


def answer_budgets(
    step: AnswerStep,
    question: Question,
    context: Context,
    retrieve_ms: float,
    kept: Sequence[BudgetResult] = (),
) -> list[BudgetResult]:
    """One result per budget of `step.budgets`, smallest first; finished ones of `kept` reused.

    A finished budget of `kept` that `step.budgets` no longer lists stays (a resume with
    fewer budgets does not drop answers already made).
    """
    done = {
        b.budget: b
        for b in kept
        if b.status == OK and all(current(b.judgements, j) for j in step.judges)
    }
    made = {b: done.get(b) or _one(step, question, context, retrieve_ms, b) for b in step.budgets}
    return [made.get(b) or done[b] for b in sorted({*made, *done})]


def _one(
    step: AnswerStep, question: Question, context: Context, retrieve_ms: float, budget: int
) -> BudgetResult:
    """The arm's answer at one budget, judged; never raises (an error is recorded)."""
    try:
        cut = cut_context(replace(context, service_answer=None), budget, step.tokens)
        got = step.answer(question, cut, retrieve_ms)
        answer = got.answer or ""
        judgements = {j.judge_id: j.judge(question, answer) for j in step.judges}
        failed = [j.error or "judge error" for j in judgements.values() if j.status == ERROR]
        correct = got.correct
        if step.primary_judge:
            ids = judge_run_ids(step.judges, step.primary_judge)
            correct = group_verdict(judgements, step.primary_judge, ids)
        return BudgetResult(
            budget=budget,
            status=ERROR if failed else OK,
            answer=answer,
            correct=correct,
            context_tokens=got.context_tokens,
            context_truncated=cut.truncated,
            judgements=judgements,
            error=failed[0][:500] if failed else None,
        )
    except Exception as exc:  # recorded; the arm is redone on resume
        return BudgetResult(budget, ERROR, error=f"{type(exc).__name__}: {exc}".splitlines()[0])
