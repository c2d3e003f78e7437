"""The pipeline, top to bottom: load → ingest → retrieve → answer → score → write.

`run_benchmark` reads as the whole story; each step is a named call taking and
returning typed values. A question's record is rewritten (atomically) after every
batch, so a crash loses at most the batch in flight, and re-running the same `out`
redoes only arms that are missing or in `error`.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from bench.answer.answer_prompt import AnswerPrompt, load_answer_prompt
from bench.answer.answer_step import AnswerStep
from bench.answer.context_fit import fit_context
from bench.arm import Arm
from bench.config import RunConfig
from bench.judge.judge_set import judge_meta
from bench.loaders import dataset_stats, load_dataset
from bench.loaders.sample import sample_dataset
from bench.remote.stage import remote_run
from bench.run import phases, resume
from bench.run.arm_setup import open_arms
from bench.run.budgets import plan_budgets
from bench.run.conversation import answer_step, run_conversation
from bench.run.directory import RunDirectory, identity
from bench.run.ingest import arm_ingester
from bench.run.lanes import Lanes, unit_lanes
from bench.run.otel import run_telemetry
from bench.run.outcome import RunOutcome
from bench.run.run_json import RunJson, run_meta
from bench.run.scale.executor import UnitPlan, plan_units
from bench.run.scale.units import Unit, parse_shard, units_of
from bench.run.settings import ArmSpec, arm_specs
from bench.runmeta import read_run_meta
from bench.scoring import health as ext_health
from bench.scoring import retrieval_health as ret_health
from bench.tokens import TokenCounter
from bench.types import Dataset

log = logging.getLogger("bench.run")


def run_benchmark(cfg: RunConfig, shared_stores: Path | None = None) -> RunOutcome:
    """Run (or resume) a benchmark under the run directory's lock; return counts.

    `shared_stores` (a sweep's `<sweep>/stores`) holds stores keyed by arm fingerprint,
    so jobs that differ only in retrieval knobs reuse one ingestion.
    Raises BenchError on bad input, or when another run holds `<out>/.lock`.
    """
    from bench.run.lock import run_lock

    with run_lock(Path(cfg.out), parse_shard(cfg.shard)):
        try:
            with run_telemetry(cfg, cfg.dataset.name):  # otel=true (bench/run/otel.py)
                return _run_locked(cfg, shared_stores)
        finally:  # after the providers closed: the cache's WAL is folded into its file
            if (remote := remote_run(cfg)) is not None:
                remote.push_top()


def _run_locked(cfg: RunConfig, shared_stores: Path | None = None) -> RunOutcome:
    specs = arm_specs(cfg)
    phases.check_phase(cfg)
    plan_budgets(cfg)  # a bad `context_budgets` is one line before any work
    prompt = load_answer_prompt(cfg.answer.prompt)
    dataset = limit_dataset(load_dataset(cfg.dataset), cfg)
    run_dir = RunDirectory(Path(cfg.out))
    remote = remote_run(cfg)  # out=s3://...: staged in cfg.out (bench/remote/stage.py)
    if remote:
        remote.pull_start(units_of(dataset.conversations, parse_shard(cfg.shard)))
    if orphans := run_dir.remove_orphans():
        log.info("removed %d temp file(s) left by an interrupted run", orphans)
    errata_sha = dataset.errata.sha256 if dataset.errata else None
    ident = phases.phase_identity(
        identity(cfg, dataset.sha256, prompt.sha256, errata_sha), cfg.phase
    )
    run_dir.check_identity(ident)
    log.info("dataset %s: %s", dataset.name, dataset_stats(dataset))
    if _finished_already(cfg, dataset, run_dir):
        return _finished_outcome(cfg, dataset, run_dir)
    cfg = fit_context(cfg, prompt, TokenCounter())  # bench.answer.context_fit: may refuse
    plan = plan_units(cfg, dataset)  # units, shard, workers, progress (bench.run.scale)
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

    providers = build_providers(cfg.provider, run_dir.path)
    outcome = RunOutcome(run_dir=run_dir.path)
    try:
        step = answer_step(cfg, prompt, providers)
        meta = run_meta(cfg, dataset, prompt, step.answerer.model, judge_meta(step.judges))
        run_json = RunJson(cfg, run_dir, ident, meta, outcome, providers.accounting)
        run_json.save()
        try:
            open_set = partial(
                open_arms,
                specs,
                cfg,
                providers,
                step.tokens,
                run_dir.path,
                shared_stores=shared_stores,
                progress=plan.tracker.ingesting,
            )
            lanes = unit_lanes(cfg, len(plan.units))
            if lanes > 1:  # units side by side, each lane with its own arms (bench.run.lanes)
                each = partial(_unit, step, cfg, run_dir, plan)
                _run_in_lanes(plan, Lanes(lanes, open_set, each), outcome, run_json)
            else:
                ids = {s.name: phases.predict_identity(cfg, s.name, dataset.sha256) for s in specs}
                arms: dict[str, Arm] = (
                    {s.name: phases.StoredArm(s.name, run_dir.path, ids[s.name]) for s in specs}
                    if cfg.phase == "evaluate"
                    else open_set()
                )
                _run_serially(plan, arms, ids, step, cfg, run_dir, outcome, run_json)
        finally:
            run_json.save()
    finally:
        providers.close()
    return outcome


def _run_serially(
    plan: UnitPlan,
    arms: dict[str, Arm],
    ids: dict[str, str],
    step: AnswerStep,
    cfg: RunConfig,
    run_dir: RunDirectory,
    outcome: RunOutcome,
    run_json: RunJson,
) -> None:
    """Every unit in turn on one set of arms (closed afterwards); run.json saved after each."""
    try:
        for unit in plan.units:
            conversation = unit.conversation
            if cfg.phase == "predict":
                outcome.questions += len(conversation.questions)
                outcome.written += phases.predict_conversation(
                    conversation,
                    arms,
                    cfg,
                    run_dir.path,
                    ids,
                    arm_ingester(cfg, outcome),
                    tick=plan.tracker.tick,
                )
            else:
                run_conversation(conversation, arms, step, cfg, run_dir, outcome, plan.tracker.tick)
            run_json.save()  # costs survive a crash in a later conversation
    finally:
        for arm in arms.values():
            arm.close()


def _run_in_lanes(
    plan: UnitPlan,
    lanes: Lanes[tuple[Unit, RunOutcome], RunOutcome],
    outcome: RunOutcome,
    run_json: RunJson,
) -> None:
    """Every unit in `lanes`; each unit's tally merged in unit order, run.json saved after."""
    units = [(unit, outcome.for_unit(unit.conversation.conversation_id)) for unit in plan.units]
    log.info("%d units side by side in %d lanes", len(units), lanes.lanes)
    try:
        for done in lanes.results(units, start=lambda item: item[0].longest_first()):
            outcome.merge_unit(done)
            run_json.save()  # costs survive a crash in a later conversation
    finally:
        lanes.close()


def _unit(
    step: AnswerStep,
    cfg: RunConfig,
    run_dir: RunDirectory,
    plan: UnitPlan,
    item: tuple[Unit, RunOutcome],
    arms: dict[str, Arm],
) -> RunOutcome:
    """One unit in a lane: `run_conversation` into the unit's own tally (returned)."""
    unit, tally = item
    run_conversation(unit.conversation, arms, step, cfg, run_dir, tally, plan.tracker.tick)
    return tally


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
    outcome = RunOutcome(run_dir=run_dir.path, questions=sum(u.questions for u in units))
    previous, _ = read_run_meta(run_dir.run_json)
    outcome.health = ext_health.table_from_json(previous and previous.extraction_health)
    outcome.retrieval = ret_health.table_from_json(previous and previous.retrieval_health)
    for unit in units:  # verdicts left unparseable: the run still exits 1 for them
        for question in unit.conversation.questions:
            if (record := run_dir.load_record(question)) is not None:
                outcome.count_errors(record, cfg.arms)
    return outcome


def limit_dataset(dataset: Dataset, cfg: RunConfig) -> Dataset:
    """The dataset within `cfg.limit` (`LimitConfig.kept`); a conversation it empties is dropped.

    Then a seeded stratified sample of what is left (`limit.per_category` / `limit.fraction`,
    bench.loaders.sample), when one is asked.
    """
    convs = dataset.conversations[: cfg.limit.conversations]
    kept = cfg.limit.kept([len(c.questions) for c in convs])
    limited = tuple(
        replace(c, questions=c.questions[:n])
        for c, n in zip(convs, kept, strict=True)
        if n or not c.questions  # one the limit emptied is not run
    )
    return sample_dataset(replace(dataset, conversations=limited), cfg.limit)
