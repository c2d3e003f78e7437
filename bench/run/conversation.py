"""One conversation through every arm: ingest, then answer, score, judge and write.

Records are written in question order.

`run_conversation` is what a serial run, a `workers=N` process and a Ray task all call
for one unit; `answer_step` builds the answer step it needs and
`bench.question_record.question_record` the record it writes.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Protocol

from bench.answer import repeats as run_repeats
from bench.answer.answer_prompt import AnswerPrompt
from bench.answer.answer_step import AnswerStep
from bench.answer.context_fit import answer_cap
from bench.answer.repeat_plan import plan_repeats
from bench.arm import Arm
from bench.arm.probe import requested_k
from bench.config import RunConfig
from bench.errors import raise_if_permanent
from bench.judge.judge_set import ChatSource, build_judges
from bench.ledger import ANSWER, JUDGE
from bench.providers.base import CallOptions, ChatProvider
from bench.providers.probe import probe_endpoints
from bench.question_record import question_record
from bench.records import ArmResult, QuestionRecord
from bench.result_parts import Health, QueryHealth
from bench.run import budgets as run_budgets
from bench.run import phases, resume
from bench.run.arms_pending import arms_to_run
from bench.run.directory import RunDirectory
from bench.run.ingest import arm_ingester
from bench.run.otel import record_written
from bench.run.outcome import RunOutcome, Tick, no_tick
from bench.scoring import retrieval_health as ret_health
from bench.tokens import TokenCounter
from bench.types import Context, Conversation, Question

log = logging.getLogger("bench.run")


@dataclass
class PendingQuestion:
    """A question with its existing record and the arms to answer or re-judge."""

    question: Question
    """The question."""
    record: QuestionRecord | None
    """Its record from an earlier session; None when it has none yet."""
    to_answer: list[str]
    """Arms to retrieve, answer, score and judge."""
    to_judge: list[str]
    """Arms whose kept answer only needs a (new) verdict."""


def run_conversation(
    conversation: Conversation,
    arms: dict[str, Arm],
    step: AnswerStep,
    cfg: RunConfig,
    run_dir: RunDirectory,
    outcome: RunOutcome,
    tick: Tick = no_tick,
) -> None:
    """Ingest what is needed, then run every pending question, records written in order.

    Each question's retrievals run in this thread, in question order (stateful arms see
    the same sequence as a serial run); its answers and judgements run in the pool, and
    its record is written, in question order, once `2 x answerer concurrency` later
    questions have been sent on (a sliding window: the server never waits for the slowest
    question of a batch). The pool has a thread per slot and arm, so arms waiting on a
    shared identical request (`bench.providers.openai_chat`) leave the slots to others.
    """
    work = pending_work(conversation, list(arms), step, cfg, run_dir, outcome)
    tick(0, 0, len(conversation.questions) - len(work))
    if not work:
        return
    run_dir.check_writable()
    # coverage's denominator (run.json); counted before raw's own count of the same text,
    # which then comes from the tokenizer's memo
    outcome.sizes[conversation.conversation_id] = step.tokens.count(conversation.transcript())
    probe_endpoints(cfg)  # once per URL per run: an unreachable one stops it in seconds
    needed = {name for w in work for name in w.to_answer}
    to_ingest = {n: arms[n] for n in arms if n in needed}
    failed = arm_ingester(cfg, outcome)(to_ingest, conversation)
    pool = ThreadPoolExecutor(max_workers=_workers(cfg, len(needed)))
    try:
        health = {a: t[conversation.conversation_id] for a, t in outcome.health.items()
                  if conversation.conversation_id in t}  # fmt: skip
        run = QuestionRun(arms, failed, step, cfg, run_dir, pool, health, outcome.retrieval)
        ahead = max(1, cfg.provider.answerer.concurrency) * 2
        waiting: deque[Callable[[], QuestionRecord]] = deque()
        for item in work:
            waiting.append(run_question(item, run))
            if len(waiting) >= ahead:
                _write_next(waiting, cfg, outcome, tick)
        while waiting:
            _write_next(waiting, cfg, outcome, tick)
    except BaseException as exc:
        # an interrupt (bench.run.interrupt) does not wait for the calls in flight
        pool.shutdown(wait=isinstance(exc, Exception), cancel_futures=True)
        raise
    pool.shutdown()


def _write_next(
    waiting: deque[Callable[[], QuestionRecord]], cfg: RunConfig, outcome: RunOutcome, tick: Tick
) -> None:
    """Complete and write the oldest question in flight; count it and tick the progress."""
    errors_before = outcome.errors
    record = waiting.popleft()()
    record_written(cfg, record)  # otel=true: its spans and evaluation events
    outcome.written += 1
    outcome.count_errors(record, cfg.arms)
    tick(1, outcome.errors - errors_before, 0)


def run_question(item: PendingQuestion, run: QuestionRun) -> Callable[[], QuestionRecord]:
    """One question, top to bottom; returns the call that completes and writes its record.

    retrieve every arm (this thread, arm order) → answer, score and judge each in the
    pool → (on `finish`) merge with the earlier record's results → write atomically.
    """
    question, rejudge = item.question, run.cfg.scoring.rejudge
    previous = item.record.arms if item.record else {}
    for name in item.to_answer:  # a redone query replaces the earlier one in the health
        if name in previous and (query := previous[name].retrieval):
            retract = ret_health.retracted(query)
            ret_health.add_to(run.retrieval, name, question.conversation_id, retract)
    retrieved = {name: run.retrieve(name, question) for name in item.to_answer}
    futures = {
        name: run.pool.submit(
            answer_and_judge, run.step, question, got, rejudge, previous.get(name)
        )
        for name, got in retrieved.items()
    }
    for name in item.to_judge:
        futures[name] = run.pool.submit(
            run_repeats.judge_again, run.step, question, previous[name], rejudge
        )

    def finish() -> QuestionRecord:
        fresh = {
            name: run.with_health(name, f.result(), retrieved.get(name))
            for name, f in futures.items()
        }
        results = {**previous, **fresh}
        ordered = {name: results[name] for name in sorted(results, key=arm_order(run.cfg))}
        record = question_record(
            question, run.cfg.dataset.name, ordered, run.run_dir.record_provenance
        )
        actions = {name: ANSWER if name in retrieved else JUDGE for name in fresh}
        run.run_dir.save_record(question, record, actions)
        return record

    return finish


def pending_work(
    conversation: Conversation,
    arm_names: list[str],
    step: AnswerStep,
    cfg: RunConfig,
    run_dir: RunDirectory,
    outcome: RunOutcome,
) -> list[PendingQuestion]:
    """The conversation's questions that still need an answer or a judgement."""
    work = []
    for question in conversation.questions:
        record = run_dir.load_record(question)
        to_answer, to_judge = arms_to_run(
            record, arm_names, step.judges, cfg.scoring.rejudge, step.repeats, step.budgets
        )
        outcome.questions += 1
        if to_answer or to_judge:
            work.append(PendingQuestion(question, record, to_answer, to_judge))
    return work


@dataclass(frozen=True)
class Retrieved:
    """One arm's retrieval for one question: its context and wall time, or why it failed."""

    context: Context | None
    """The context block, None when retrieval (or the arm's ingestion) failed."""
    retrieve_ms: float = 0.0
    """Wall time of `arm.retrieve`, milliseconds."""
    error: str | None = None
    """The one-line failure, when `context` is None."""
    health: QueryHealth | None = None
    """This query's retrieval health for the record (`items`, `requested_k`, `empty`, or
    `failed`, `timed_out`); None when the arm's ingestion failed (no query was made)."""


@dataclass(frozen=True)
class QuestionRun:
    """What every question of one conversation shares: arms, answer step, pool, folder."""

    arms: dict[str, Arm]
    """The open arms by name."""
    failed: dict[str, str]
    """Arms whose ingestion failed -> why (their results are `error`)."""
    step: AnswerStep
    """The answer step (answerer, judges, repeats)."""
    cfg: RunConfig
    """The run configuration."""
    run_dir: RunDirectory
    """Where records are written."""
    pool: ThreadPoolExecutor
    """Runs answers and judgements; retrievals stay in the calling thread."""
    health: dict[str, Health] = field(default_factory=dict)
    """Each extracting arm's extraction health on this conversation."""
    retrieval: ret_health.RetrievalTable = field(default_factory=dict)
    """The run's retrieval health (arm -> unit), every query of this conversation added."""

    def with_health(self, name: str, result: ArmResult, got: Retrieved | None = None) -> ArmResult:
        """The result with the arm's extraction and the query's retrieval health, when known.

        Extraction health is the arm's on this conversation; retrieval health is
        `got.health`, set when a query was made.
        """
        extraction = self.health.get(name)
        if extraction:
            result = replace(result, extraction=extraction)
        return replace(result, retrieval=got.health) if got and got.health else result

    def retrieve(self, name: str, question: Question) -> Retrieved:
        """The arm's context for the question (an ingestion failure is carried along).

        Every query made is added to the retrieval health of the arm on this unit.
        """
        if name in self.failed:
            return Retrieved(None, error=self.failed[name])
        started, unit = time.perf_counter(), question.conversation_id
        try:
            context = self.arms[name].retrieve(question)
        except Exception as exc:
            raise_if_permanent(exc)
            log.exception("retrieve %s %s failed", name, question.question_id)
            error = f"{type(exc).__name__}: {exc}"
            failure = ret_health.query_failure(error)
            ret_health.add_to(self.retrieval, name, unit, failure)
            health = QueryHealth(failed=1, timed_out=failure.timed_out)
            return Retrieved(None, error=f"retrieve failed: {error}", health=health)
        elapsed = (time.perf_counter() - started) * 1000
        empty = not context.items and not context.text.strip()
        got = ret_health.query_result(len(context.items), empty)
        ret_health.add_to(self.retrieval, name, unit, got)
        k = requested_k(self.arms[name])
        health = QueryHealth(items=len(context.items), empty=int(empty), requested_k=k)
        return Retrieved(context, context.meta.get(phases.PREDICTED_MS, elapsed), health=health)


def answer_and_judge(
    step: AnswerStep,
    question: Question,
    got: Retrieved,
    rejudge: bool,
    previous: ArmResult | None = None,
) -> ArmResult:
    """Answer from the retrieved context, score and judge; any failure is an `error` result.

    With context budgets, the arm is also answered at each budget (bench/run/budgets.py);
    a `previous` result that is `ok` with its repeats done is kept (judged if needed), so
    a resume answers only the budgets it lacks.
    """
    if got.context is None:
        return ArmResult.failed(got.error or "retrieve failed")
    try:
        if previous is not None and _kept(step, previous):
            first = step.judge(question, replace(previous, budgets=[]), rejudge)
        else:
            first = step.judge(
                question, step.answer(question, got.context, got.retrieve_ms), rejudge
            )
            drawn = run_repeats.draw(
                step, step.repeats, question, got.context, got.retrieve_ms, first
            )
            first = replace(first, repeats=drawn) if drawn else first
        if not step.budgets:
            return first
        kept = previous.budgets if previous is not None else []
        at = run_budgets.answer_budgets(step, question, got.context, got.retrieve_ms, kept)
        return replace(first, budgets=at)
    except Exception as exc:  # recorded as `error`, retried on resume, never scored
        raise_if_permanent(exc)
        log.warning("answer %s failed: %s", question.question_id, exc)
        return ArmResult.failed(f"{type(exc).__name__}: {exc}")


def _kept(step: AnswerStep, previous: ArmResult) -> bool:
    """True when `previous` needs only budgets: `ok`, its repeats all drawn, not imported."""
    return (
        bool(step.budgets)
        and previous.status == "ok"
        and previous.imported is None
        and not run_repeats.pending(previous, step.repeats, step.judges)
    )


class StepProviders(ChatSource, Protocol):
    """What the answer step is built from: the answerer and each judge's chat provider."""

    @property
    def answerer(self) -> ChatProvider:
        """The model that writes the answers."""
        ...


def answer_step(cfg: RunConfig, prompt: AnswerPrompt, providers: StepProviders) -> AnswerStep:
    """The answer step every question of the run goes through: answerer, judges, repeats."""
    resume.check_primary_judge(cfg)
    judges = build_judges(cfg.judges, providers, cfg.scoring.judge_attempts)
    return AnswerStep(
        prompt=prompt,
        answerer=providers.answerer,
        tokens=TokenCounter(),
        f1_threshold=cfg.scoring.f1_threshold,
        judges=judges,
        primary_judge=cfg.scoring.primary_judge,
        save_context=cfg.save_context,
        repeats=plan_repeats(cfg),
        options=CallOptions(max_tokens=answer_cap(cfg), stop=tuple(cfg.answer.stop)),
        window=cfg.provider.context_tokens,
        truncate_to_fit=cfg.answer.truncate_to_fit,
        budgets=run_budgets.plan_budgets(cfg),
    )


def _workers(cfg: RunConfig, arms: int) -> int:
    """Pool threads: one with the offline answerer (CPU-bound), else a slot per arm."""
    if cfg.provider.answerer.kind == "offline":
        return 1
    return max(1, cfg.provider.answerer.concurrency) * max(1, arms)


def arm_order(cfg: RunConfig) -> Callable[[str], tuple[int, str]]:
    """Sort key of arm names: the configured order, then unknown arms by name."""
    order = {name: i for i, name in enumerate(cfg.arms)}
    return lambda name: (order.get(name, len(order)), name)
