"""The pipeline, top to bottom: load → ingest → retrieve → answer → score → write.

`run_benchmark` reads as the whole story; each step is a named call taking and
returning typed values. A question's record is rewritten (atomically) after every
batch, so a crash loses at most the batch in flight, and re-running the same `out`
redoes only arms that are missing or in `error`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from bench.arm import Arm, ArmServices
from bench.config import RunConfig
from bench.hashing import stable_hash
from bench.loaders import dataset_stats, load_dataset
from bench.paths import contained, safe_name
from bench.providers.base import CallOptions
from bench.providers.probe import probe_endpoints
from bench.records import ERROR, OK, UNPARSEABLE, ArmResult, QuestionRecord
from bench.registry import arm_kind, load_symbol
from bench.remote.stage import remote_run
from bench.run import health as ext_health
from bench.run import phases, resume
from bench.run import repeats as run_repeats
from bench.run.answer_prompt import AnswerPrompt, load_answer_prompt
from bench.run.answer_step import AnswerStep
from bench.run.context_fit import answer_cap, fit_context
from bench.run.directory import RunDirectory, arms_to_run, identity
from bench.run.run_json import RunJson, run_meta
from bench.run.settings import ArmSpec, arm_specs
from bench.runmeta import read_run_meta
from bench.scale.executor import UnitPlan, plan_units
from bench.scale.unit_task import Tick, UnitResult, _no_tick
from bench.scale.units import parse_shard, units_of
from bench.scoring.errata import record_errata_fields
from bench.tokens import TokenCounter
from bench.types import Context, Conversation, Dataset, Question

log = logging.getLogger("bench.run")


@dataclass
class RunOutcome:
    """What a run did: questions seen, records written, arm results still in error."""

    run_dir: Path
    """The run directory written to."""
    questions: int = 0
    """Questions seen."""
    written: int = 0
    """Records written."""
    errors: int = 0
    """Requested arms' results still in `error` after this run."""
    first_error: str | None = None
    """The first such error message; None when there is none."""
    health: ext_health.HealthTable = field(default_factory=dict)
    """Extraction health per arm and conversation, this session's merged over earlier ones."""
    judge_errors: int = 0
    """Verdicts on the requested arms' answers whose judge call failed (retried on resume)."""
    judge_unparseable: int = 0
    """Verdicts on the requested arms' answers recorded as `unparseable`."""

    def count_errors(self, record: QuestionRecord, arms: list[str]) -> None:
        """Add the requested arms' `error` results and judge problems to the tally."""
        for name, result in record.arms.items():
            if name not in arms:
                continue
            failed = [result.error] if result.status == ERROR else run_repeats.errors(result)
            if failed:  # an arm with repeats in error counts once
                self.errors += 1
                self.first_error = self.first_error or failed[0]
            if result.status == OK:
                statuses = [j.status for j in result.judgements.values()]
                self.judge_errors += statuses.count(ERROR)
                self.judge_unparseable += statuses.count(UNPARSEABLE)

    def add_unit(self, unit: UnitResult) -> None:
        """Add the counts of a unit run by a worker process or a Ray task."""
        self.questions += unit.questions
        self.written += unit.written
        self.errors += unit.errors
        self.first_error = self.first_error or unit.first_error
        self.judge_errors += unit.judge_errors
        self.judge_unparseable += unit.judge_unparseable
        for arm, per_conv in ext_health.table_from_json(unit.health).items():
            self.health.setdefault(arm, {}).update(per_conv)  # this session's over earlier


@dataclass
class _Work:
    """A question with its existing record and the arms to answer or re-judge."""

    question: Question
    record: QuestionRecord | None
    to_answer: list[str]
    to_judge: list[str]


def run_benchmark(cfg: RunConfig, shared_stores: Path | None = None) -> RunOutcome:
    """Run (or resume) a benchmark under the run directory's lock; return counts.

    `shared_stores` (a sweep's `<sweep>/stores`) holds stores keyed by arm fingerprint,
    so jobs that differ only in retrieval knobs reuse one ingestion.
    Raises BenchError on bad input, or when another run holds `<out>/.lock`.
    """
    from bench.run.lock import run_lock

    with run_lock(Path(cfg.out), parse_shard(cfg.shard)):
        try:
            return _run_locked(cfg, shared_stores)
        finally:  # after the providers closed: the cache's WAL is folded into its file
            if (remote := remote_run(cfg)) is not None:
                remote.push_top()


def _run_locked(cfg: RunConfig, shared_stores: Path | None = None) -> RunOutcome:
    specs = arm_specs(cfg)
    phases.check_phase(cfg)
    prompt = load_answer_prompt(cfg.answer.prompt)
    dataset = limit_dataset(load_dataset(cfg.dataset), cfg)
    run_dir = RunDirectory(Path(cfg.out))
    remote = remote_run(cfg)  # out=s3://...: staged in cfg.out (bench/remote/stage.py)
    if remote:
        remote.pull_start(units_of(dataset.conversations, parse_shard(cfg.shard)))
    if orphans := run_dir.remove_orphans():
        log.info("removed %d temp file(s) left by an interrupted run", orphans)
    errata_sha = dataset.errata.sha256 if dataset.errata else None
    ident = identity(cfg, dataset.sha256, prompt.sha256, errata_sha)
    run_dir.check_identity(ident)
    log.info("dataset %s: %s", dataset.name, dataset_stats(dataset))
    if _finished_already(cfg, dataset, run_dir):
        return _finished_outcome(cfg, dataset, run_dir)
    cfg = fit_context(cfg, prompt, TokenCounter())  # bench.run.context_fit: may refuse
    plan = plan_units(cfg, dataset)  # units, shard, workers, progress (bench.scale)
    try:
        if not plan.in_process:  # the workers build their own providers and arms
            from bench.run.fan_out import run_fanned_out

            return run_fanned_out(cfg, dataset, prompt, run_dir, ident, plan)
        return _run_in_process(cfg, dataset, prompt, run_dir, ident, plan, specs, shared_stores)
    finally:
        plan.close()


def _run_in_process(
    cfg: RunConfig,
    dataset: Dataset,
    prompt: AnswerPrompt,
    run_dir: RunDirectory,
    ident: dict[str, Any],
    plan: UnitPlan,
    specs: list[ArmSpec],
    shared_stores: Path | None,
) -> RunOutcome:
    """Every unit in this process: one set of providers and arms for the whole run."""
    from bench.providers.factory import build_providers

    phase = cfg.phase
    providers = build_providers(cfg.provider, run_dir.path)
    outcome = RunOutcome(run_dir.path)
    try:
        step = _answer_step(cfg, prompt, providers)
        meta = run_meta(cfg, dataset, prompt, step.answerer.model, step.judges)
        run_json = RunJson(cfg, run_dir, ident, meta, outcome, providers.accounting)
        run_json.save()
        try:
            ids = {s.name: phases.predict_identity(cfg, s.name, dataset.sha256) for s in specs}
            arms: dict[str, Arm] = (
                {s.name: phases.StoredArm(s.name, run_dir.path, ids[s.name]) for s in specs}
                if phase == "evaluate"
                else open_arms(
                    specs, cfg, providers, step.tokens, run_dir.path, shared_stores=shared_stores
                )
            )
            try:
                for unit in plan.units:
                    conversation = unit.conversation
                    if phase == "predict":
                        outcome.questions += len(conversation.questions)
                        outcome.written += phases.predict_conversation(
                            conversation, arms, cfg, run_dir.path, ids,
                            partial(ingest_arms, health=outcome.health),
                        )  # fmt: skip
                    else:
                        run_conversation(
                            conversation, arms, step, cfg, run_dir, outcome, plan.tracker.tick
                        )
                    run_json.save()  # costs survive a crash in a later conversation
            finally:
                for arm in arms.values():
                    arm.close()
        finally:
            run_json.save()
    finally:
        providers.close()
    return outcome


def _finished_already(cfg: RunConfig, dataset: Dataset, run_dir: RunDirectory) -> bool:
    """True when this process's units need nothing (decided before providers and arms).

    A missing or damaged run.json is never "finished": the full path rewrites it.
    """
    meta, problems = read_run_meta(run_dir.run_json)
    if meta is None or problems:
        return False
    units = units_of(dataset.conversations, parse_shard(cfg.shard))
    return resume.nothing_pending((u.conversation for u in units), cfg, run_dir)


def _finished_outcome(cfg: RunConfig, dataset: Dataset, run_dir: RunDirectory) -> RunOutcome:
    """The outcome of a session that found every question done: counts, earlier health."""
    log.info("nothing pending: every requested arm has its result")
    units = units_of(dataset.conversations, parse_shard(cfg.shard))
    outcome = RunOutcome(run_dir.path, questions=sum(u.questions for u in units))
    previous, _ = read_run_meta(run_dir.run_json)
    outcome.health = ext_health.table_from_json(previous and previous.extraction_health)
    return outcome


def run_conversation(
    conversation: Conversation,
    arms: dict[str, Arm],
    step: AnswerStep,
    cfg: RunConfig,
    run_dir: RunDirectory,
    outcome: RunOutcome,
    tick: Tick = _no_tick,
) -> None:
    """Ingest what is needed, then run every pending question, records written in order.

    Questions go in chunks: each question's retrievals run in this thread, in question
    order (stateful arms see the same sequence as a serial run), while answers and
    judgements of the whole chunk run in the pool; records are then written in order.
    """
    work = pending_work(conversation, list(arms), step, cfg, run_dir, outcome)
    tick(0, 0, len(conversation.questions) - len(work))
    if not work:
        return
    run_dir.check_writable()
    probe_endpoints(cfg)  # once per URL per run: an unreachable one stops it in seconds
    needed = {name for w in work for name in w.to_answer}
    failed = ingest_arms({n: arms[n] for n in arms if n in needed}, conversation, outcome.health)
    with ThreadPoolExecutor(max_workers=_workers(cfg)) as pool:
        health = {a: t[conversation.conversation_id] for a, t in outcome.health.items()
                  if conversation.conversation_id in t}  # fmt: skip
        run = _QuestionRun(arms, failed, step, cfg, run_dir, pool, health)
        for chunk in _chunks(work, max(1, cfg.provider.answerer.concurrency) * 2):
            for finish in [run_question(item, run) for item in chunk]:
                errors_before = outcome.errors
                record = finish()
                outcome.written += 1
                outcome.count_errors(record, cfg.arms)
                tick(1, outcome.errors - errors_before, 0)


def run_question(item: _Work, run: _QuestionRun) -> Callable[[], QuestionRecord]:
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
        ordered = {name: results[name] for name in sorted(results, key=_arm_order(run.cfg))}
        record = _record(question, run.cfg, ordered, run.run_dir.record_provenance)
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
) -> list[_Work]:
    """The conversation's questions that still need an answer or a judgement."""
    work = []
    for question in conversation.questions:
        record = run_dir.load_record(question)
        to_answer, to_judge = arms_to_run(
            record, arm_names, step.judges, cfg.scoring.rejudge, step.repeats
        )
        outcome.questions += 1
        if to_answer or to_judge:
            work.append(_Work(question, record, to_answer, to_judge))
    return work


def ingest_arms(
    arms: dict[str, Arm], conversation: Conversation, health: ext_health.HealthTable | None = None
) -> dict[str, str]:
    """Ingest the conversation into each arm; return {arm: error} for arms that failed.

    Arms that extract report their extraction health, kept in `health` (arm -> conversation).
    """
    failed = {}
    for name, arm in arms.items():
        started = time.perf_counter()
        try:
            stats = arm.ingest(conversation)
        except Exception as exc:  # an arm's failure is recorded, the run goes on
            log.exception("ingest %s/%s failed", name, conversation.conversation_id)
            failed[name] = f"ingest failed: {type(exc).__name__}: {exc}"
            continue
        seconds = time.perf_counter() - started
        log.info("ingest %s/%s %.1fs %s", name, conversation.conversation_id, seconds, stats)
        got = ext_health.from_stats(stats) if isinstance(stats, dict) else None
        if got is not None and health is not None:
            health.setdefault(name, {})[conversation.conversation_id] = got
    return failed


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
class _QuestionRun:
    """What every question of one conversation shares: arms, answer step, pool, folder."""

    arms: dict[str, Arm]
    failed: dict[str, str]
    step: AnswerStep
    cfg: RunConfig
    run_dir: RunDirectory
    pool: ThreadPoolExecutor
    health: dict[str, ext_health.Health] = field(default_factory=dict)

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


def _record(
    question: Question, cfg: RunConfig, arms: dict[str, ArmResult], provenance: dict[str, Any]
) -> QuestionRecord:
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


def open_arms(
    specs: list[ArmSpec],
    cfg: RunConfig,
    providers: Any,
    tokens: TokenCounter,
    run_dir: Path,
    store_root: Path | None = None,
    shared_stores: Path | None = None,
) -> dict[str, Arm]:
    """Construct every requested arm with its services (lazily importing each kind).

    Stores go under `<store_root>/stores/<arm>` (`store_root` defaults to `run_dir`;
    run-wide state stays in `run_dir`), or with `shared_stores` to
    `<shared_stores>/<arm>-<hash of the arm's fingerprint>`: the fingerprint leaves
    retrieval knobs out, so sweep jobs differing only in those share one store, and
    jobs differing in what ingestion builds never overwrite each other's.
    """
    arms: dict[str, Arm] = {}
    for spec in specs:
        services = ArmServices(
            embedder=providers.embedder,
            tokens=tokens,
            store_dir=(store_root or run_dir) / "stores" / safe_name(spec.name),
            run_dir=run_dir,
            extractor=providers.extractor,
            max_context_tokens=cfg.answer.max_context_tokens,
            extract_mode=cfg.provider.extractor.extract_mode,
        )
        cls = load_symbol(arm_kind(spec.kind, f"arm_options.{spec.name}.kind").implementation)
        arm = cls(spec.name, spec.options, services)
        if shared_stores is not None:
            key = f"{spec.name}-{stable_hash(arm.fingerprint())[:16]}"
            store_dir = contained(shared_stores / safe_name(key), shared_stores)
            arm = cls(spec.name, spec.options, replace(services, store_dir=store_dir))
        arms[spec.name] = arm
    return arms


def limit_dataset(dataset: Dataset, cfg: RunConfig) -> Dataset:
    """Keep the first `limit.conversations` and `limit.questions` per conversation."""
    convs = dataset.conversations[: cfg.limit.conversations]
    if cfg.limit.questions is not None:
        convs = tuple(replace(c, questions=c.questions[: cfg.limit.questions]) for c in convs)
    return replace(dataset, conversations=tuple(convs))


def _answer_step(cfg: RunConfig, prompt: Any, providers: Any) -> AnswerStep:
    from bench.scoring.judge_set import build_judges

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
        repeats=run_repeats.plan_repeats(cfg),
        options=CallOptions(max_tokens=answer_cap(cfg), stop=tuple(cfg.answer.stop)),
        window=cfg.provider.context_tokens,
        truncate_to_fit=cfg.answer.truncate_to_fit,
    )


def _workers(cfg: RunConfig) -> int:
    return (
        1 if cfg.provider.answerer.kind == "offline" else max(1, cfg.provider.answerer.concurrency)
    )


def _chunks(items: list[_Work], size: int) -> Iterator[list[_Work]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _arm_order(cfg: RunConfig) -> Any:
    order = {name: i for i, name in enumerate(cfg.arms)}
    return lambda name: (order.get(name, len(order)), name)
