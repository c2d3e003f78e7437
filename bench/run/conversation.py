"""One conversation through every arm: ingest, then answer, score, judge and write.

Records are written in question order.

`run_conversation` is what a serial run, a `workers=N` process and a Ray task all call
for one unit; `answer_step` builds the answer step it needs and `build_record` the
record it writes.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from bench.arm import Arm
from bench.config import RunConfig
from bench.providers.base import CallOptions
from bench.providers.probe import probe_endpoints
from bench.records import ArmResult, QuestionRecord
from bench.run import phases, resume
from bench.run import repeats as run_repeats
from bench.run.answer_prompt import AnswerPrompt
from bench.run.answer_step import AnswerStep
from bench.run.context_fit import answer_cap
from bench.run.directory import RunDirectory, arms_to_run
from bench.run.outcome import RunOutcome, Tick, no_tick
from bench.run.repeat_plan import plan_repeats
from bench.run.side_by_side import side_by_side
from bench.scoring import health as ext_health
from bench.scoring.errata import record_errata_fields
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
    probe_endpoints(cfg)  # once per URL per run: an unreachable one stops it in seconds
    needed = {name for w in work for name in w.to_answer}
    to_ingest = {n: arms[n] for n in arms if n in needed}
    failed = ingest_arms(to_ingest, conversation, outcome.health, ingest_concurrency(cfg))
    with ThreadPoolExecutor(max_workers=_workers(cfg, len(needed))) as pool:
        health = {a: t[conversation.conversation_id] for a, t in outcome.health.items()
                  if conversation.conversation_id in t}  # fmt: skip
        run = QuestionRun(arms, failed, step, cfg, run_dir, pool, health)
        ahead = max(1, cfg.provider.answerer.concurrency) * 2
        waiting: deque[Callable[[], QuestionRecord]] = deque()
        for item in work:
            waiting.append(run_question(item, run))
            if len(waiting) >= ahead:
                _write_next(waiting, cfg, outcome, tick)
        while waiting:
            _write_next(waiting, cfg, outcome, tick)


def _write_next(
    waiting: deque[Callable[[], QuestionRecord]], cfg: RunConfig, outcome: RunOutcome, tick: Tick
) -> None:
    """Complete and write the oldest question in flight; count it and tick the progress."""
    errors_before = outcome.errors
    record = waiting.popleft()()
    outcome.written += 1
    outcome.count_errors(record, cfg.arms)
    tick(1, outcome.errors - errors_before, 0)


def run_question(item: PendingQuestion, run: QuestionRun) -> Callable[[], QuestionRecord]:
    """One question, top to bottom; returns the call that completes and writes its record.

    retrieve every arm (this thread, arm order) → answer, score and judge each in the
    pool → (on `finish`) merge with the earlier record's results → write atomically.
    """
    question, rejudge = item.question, run.cfg.scoring.rejudge
    retrieved = {name: run.retrieve(name, question) for name in item.to_answer}
    futures = {
        name: run.pool.submit(answer_and_judge, run.step, question, got, rejudge)
        for name, got in retrieved.items()
    }
    previous = item.record.arms if item.record else {}
    for name in item.to_judge:
        futures[name] = run.pool.submit(
            run_repeats.judge_again, run.step, question, previous[name], rejudge
        )

    def finish() -> QuestionRecord:
        fresh = {name: run.with_health(name, f.result()) for name, f in futures.items()}
        results = {**previous, **fresh}
        ordered = {name: results[name] for name in sorted(results, key=arm_order(run.cfg))}
        record = build_record(question, run.cfg, ordered, run.run_dir.record_provenance)
        run.run_dir.save_record(question, record)
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
            record, arm_names, step.judges, cfg.scoring.rejudge, step.repeats
        )
        outcome.questions += 1
        if to_answer or to_judge:
            work.append(PendingQuestion(question, record, to_answer, to_judge))
    return work


def ingest_arms(
    arms: dict[str, Arm],
    conversation: Conversation,
    health: ext_health.HealthTable | None = None,
    concurrency: int = 1,
) -> dict[str, str]:
    """Ingest the conversation into each arm; return {arm: error} for arms that failed.

    Arms that extract report their extraction health, kept in `health` (arm -> conversation).
    With `concurrency` > 1 up to that many arms ingest at once, each in its own thread
    (an LLM extractor's calls overlap, and the identical ones of two arms are sent once:
    `bench.providers.openai_chat`); the results, log lines and health are still taken in
    arm order, so they read exactly as a serial ingestion's.
    """
    calls = {name: partial(_ingest_one, arm, conversation) for name, arm in arms.items()}
    if concurrency > 1 and len(arms) > 1:  # Ctrl-C still aborts every arm's ingestion
        done = side_by_side(calls, concurrency)
    else:
        done = {name: call() for name, call in calls.items()}
    failed = {}
    cid = conversation.conversation_id
    for name, got in done.items():
        if got.error is not None:  # an arm's failure is recorded, the run goes on
            log.error("ingest %s/%s failed", name, cid, exc_info=got.error)
            failed[name] = f"ingest failed: {type(got.error).__name__}: {got.error}"
            continue
        log.info("ingest %s/%s %.1fs %s", name, cid, got.seconds, got.stats)
        found = ext_health.from_stats(got.stats) if isinstance(got.stats, dict) else None
        if found is not None and health is not None:
            health.setdefault(name, {})[cid] = found
    return failed


def ingest_concurrency(cfg: RunConfig) -> int:
    """How many arms of one unit ingest at once: the extractor endpoint's concurrency.

    1 (one arm after another) with the offline extractor: its work is CPU under the GIL,
    and threads would only add switching.
    """
    extractor = cfg.provider.extractor
    return 1 if extractor.kind == "offline" else max(1, extractor.concurrency)


def arm_ingester(
    cfg: RunConfig, health: ext_health.HealthTable
) -> Callable[[dict[str, Arm], Conversation], dict[str, str]]:
    """`ingest_arms` bound to the run's health table and `ingest_concurrency(cfg)`."""
    return partial(ingest_arms, health=health, concurrency=ingest_concurrency(cfg))


@dataclass(frozen=True)
class _Ingested:
    """One arm's ingestion: its stats and wall time, or the exception it raised."""

    stats: Any = None
    seconds: float = 0.0
    error: Exception | None = None


def _ingest_one(arm: Arm, conversation: Conversation) -> _Ingested:
    started = time.perf_counter()
    try:
        stats = arm.ingest(conversation)
    except Exception as exc:
        return _Ingested(error=exc)
    return _Ingested(stats, time.perf_counter() - started)


@dataclass(frozen=True)
class Retrieved:
    """One arm's retrieval for one question: its context and wall time, or why it failed."""

    context: Context | None
    """The context block, None when retrieval (or the arm's ingestion) failed."""
    retrieve_ms: float = 0.0
    """Wall time of `arm.retrieve`, milliseconds."""
    error: str | None = None
    """The one-line failure, when `context` is None."""


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
    health: dict[str, ext_health.Health] = field(default_factory=dict)
    """Each extracting arm's extraction health on this conversation."""

    def with_health(self, name: str, result: ArmResult) -> ArmResult:
        """The result with the arm's extraction health on this conversation, when it has one."""
        got = self.health.get(name)
        return replace(result, extraction=got.to_json()) if got else result

    def retrieve(self, name: str, question: Question) -> Retrieved:
        """The arm's context for the question (an ingestion failure is carried along)."""
        if name in self.failed:
            return Retrieved(None, error=self.failed[name])
        started = time.perf_counter()
        try:
            context = self.arms[name].retrieve(question)
        except Exception as exc:
            log.exception("retrieve %s %s failed", name, question.question_id)
            return Retrieved(None, error=f"retrieve failed: {type(exc).__name__}: {exc}")
        elapsed = (time.perf_counter() - started) * 1000
        return Retrieved(context, context.meta.get(phases.PREDICTED_MS, elapsed))


def answer_and_judge(
    step: AnswerStep, question: Question, got: Retrieved, rejudge: bool
) -> ArmResult:
    """Answer from the retrieved context, score and judge; any failure is an `error` result."""
    if got.context is None:
        return ArmResult.failed(got.error or "retrieve failed")
    try:
        first = step.judge(question, step.answer(question, got.context, got.retrieve_ms), rejudge)
        drawn = run_repeats.draw(step, step.repeats, question, got.context, got.retrieve_ms, first)
        return replace(first, repeats=drawn) if drawn else first
    except Exception as exc:  # recorded as `error`, retried on resume, never scored
        log.warning("answer %s failed: %s", question.question_id, exc)
        return ArmResult.failed(f"{type(exc).__name__}: {exc}")


def build_record(
    question: Question, cfg: RunConfig, arms: dict[str, ArmResult], provenance: dict[str, Any]
) -> QuestionRecord:
    """The question's record holding `arms` (its errata fields and `provenance` stamped)."""
    return QuestionRecord(
        question_id=question.question_id,
        dataset=cfg.dataset.name,
        conversation_id=question.conversation_id,
        category=question.category,
        question=question.question,
        gold=question.gold,
        evidence=list(question.evidence),
        adversarial_answer=question.adversarial_answer,
        question_type=question.question_type,
        arms=arms,
        provenance=dict(provenance),
        **record_errata_fields(question),
    )


def answer_step(cfg: RunConfig, prompt: AnswerPrompt, providers: Any) -> AnswerStep:
    """The answer step every question of the run goes through: answerer, judges, repeats."""
    from bench.scoring.judges import build_judge

    resume.check_primary_judge(cfg)
    judges = tuple(
        build_judge(j, providers.judge(j), cfg.scoring.judge_attempts) for j in cfg.judges
    )
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
