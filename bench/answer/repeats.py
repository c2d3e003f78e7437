"""`repeats=N`: draw the stochastic parts of a run N times, under distinct cache keys.

What is stochastic: answers from a sampling answerer (not offline, temperature > 0) and
LLM judges (hosted models are not bit-deterministic even at temperature 0, and how often
a judge agrees with itself is what the repeats measure). Retrieval is not repeated:
every repeat reuses repeat 0's context, so repeats isolate generation and judging noise.
A run with neither stochastic part is reported as `deterministic: repeats skipped`.

Cache keys: the response cache keys every request on its prompt version; repeat r >= 1
asks with version `<version>#repeat<r>` (`bench.providers.cache.repeat_version`), so
each repeat is its own cached draw, and repeat 0 keeps the single-run key: existing
caches and results stay valid, and a resumed run replays finished draws from the cache.

Storage: repeats 1 .. N-1 live inside the arm's result (`ArmResult.repeats`) in the one
record per question, so pairing across arms and repeats stays by construction, and a
record is written atomically with all its repeats (a crash loses the whole question, as
in a single run). An arm whose repeats are missing, in error or judged by another
judge is redone on resume.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from bench.answer.repeat_plan import RepeatPlan
from bench.errors import raise_if_permanent
from bench.judge.protocol import JudgeIdentity, judge_run_ids
from bench.records import ERROR, OK, SKIPPED, ArmResult, RepeatResult
from bench.scoring.judge_runs import group_verdict

if TYPE_CHECKING:
    from bench.answer.answer_step import AnswerStep
    from bench.types import Context, Question

DONE = (OK, SKIPPED)
"""Verdict statuses a draw needs no new call for (`skipped`: outside the judge's scope)."""


def pending(result: ArmResult, plan: RepeatPlan, judges: Sequence[JudgeIdentity]) -> bool:
    """True when an `ok` result lacks an `ok` repeat 1 .. N-1 judged by every current judge."""
    if not plan.active or result.status != OK:
        return False
    done = {r.repeat: r for r in result.repeats if r.status == OK}
    for index in range(1, plan.count):
        got = done.get(index)
        if got is None:
            return True
        for judge in judges:
            old = got.judgements.get(judge.judge_id)
            if (
                old is None
                or old.status not in DONE
                or (old.model, old.prompt_hash)
                != (
                    judge.model,
                    judge.prompt_hash,
                )
            ):
                return True
    return False


def errors(result: ArmResult) -> list[str]:
    """The error lines of a result's repeats in `error`."""
    return [r.error or "error" for r in result.repeats if r.status == ERROR]


def draw(
    step: AnswerStep,
    plan: RepeatPlan,
    question: Question,
    context: Context,
    retrieve_ms: float,
    first: ArmResult,
) -> list[RepeatResult]:
    """Repeats 1 .. N-1 of an arm on a question, in order (one thread: a stable sequence)."""
    if not plan.active or first.status != OK:
        return []
    return [
        _one(step, plan, question, context, retrieve_ms, first, r) for r in range(1, plan.count)
    ]


def judge_again(
    step: AnswerStep, question: Question, result: ArmResult, rejudge: bool
) -> ArmResult:
    """Repeat 0 judged as `AnswerStep.judge` does, and with `rejudge` every `ok` draw too."""
    judged = step.judge(question, result, rejudge)
    if not rejudge or not judged.repeats:
        return judged
    redone = [_judged(step, question, r) if r.status == OK else r for r in judged.repeats]
    return replace(judged, repeats=redone)


def _one(
    step: AnswerStep,
    plan: RepeatPlan,
    question: Question,
    context: Context,
    retrieve_ms: float,
    first: ArmResult,
    repeat: int,
) -> RepeatResult:
    """One repeat: a fresh answer (when answers vary) and fresh verdicts; never raises."""
    try:
        drawn = RepeatResult(repeat, OK, first.answer or "", first.correct, cached=first.cached)
        if plan.answers:
            got = step.answer(question, context, retrieve_ms, repeat=repeat)
            drawn = replace(drawn, answer=got.answer or "", correct=got.correct, cached=got.cached)
        return _judged(step, question, drawn)
    except Exception as exc:  # recorded; the arm is redone on resume
        raise_if_permanent(exc)
        return RepeatResult(repeat, ERROR, error=f"{type(exc).__name__}: {exc}".splitlines()[0])


def _judged(step: AnswerStep, question: Question, drawn: RepeatResult) -> RepeatResult:
    """The draw with every judge's verdict under its repeat's key; the primary sets `correct`.

    A verdict in `error` makes the draw an `error` (redone with its arm on resume).
    """
    answer, repeat = drawn.answer or "", drawn.repeat
    judgements = {j.judge_id: j.judge(question, answer, repeat=repeat) for j in step.judges}
    failed = [j.error or "judge error" for j in judgements.values() if j.status not in DONE]
    correct = drawn.correct
    if step.primary_judge:
        ids = judge_run_ids(step.judges, step.primary_judge)
        correct = group_verdict(judgements, step.primary_judge, ids)
    return replace(
        drawn,
        status=ERROR if failed else OK,
        judgements=judgements,
        correct=correct,
        error=failed[0][:500] if failed else None,
    )
