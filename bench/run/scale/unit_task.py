"""One unit, run anywhere: build providers and arms, run the conversation, report counts.

`run_unit` is a plain function of picklable values, so the same code runs in this
process, in a `workers=N` child process and as a Ray task. Each call builds its own
providers, arms and stores (under `<out>/stores/<arm>/<unit>/`, as in a serial run),
so a unit is isolated from every other; the answers are the serial run's because every
input is the same and the offline models are deterministic.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.answer.answer_prompt import AnswerPrompt
from bench.arm import IngestProgress
from bench.config import RunConfig
from bench.providers.ratelimit import LimiterFactory
from bench.question_record import question_record
from bench.records import OK, ArmResult, write_record
from bench.run.conversation import answer_step, arm_order, run_conversation
from bench.run.outcome import RunOutcome, Tick, UnitResult, no_tick
from bench.run.scale.units import Unit
from bench.scoring import health as ext_health
from bench.scoring import retrieval_health as ret_health
from bench.verify.journal import note_record


@dataclass(frozen=True)
class UnitTask:
    """Everything a worker needs to run one unit; picklable, holds no secret."""

    cfg: RunConfig
    """The resolved run configuration."""
    prompt: AnswerPrompt
    """The loaded answer prompt every question is answered with."""
    unit: Unit
    """The unit (conversation) to run."""
    run_dir: str
    """Path of the run directory records are written to."""
    record_provenance: dict[str, Any]
    """Stamped on every record the worker writes (run name, config hash, ...)."""


def run_unit(
    task: UnitTask,
    tick: Tick = no_tick,
    limiters: LimiterFactory | None = None,
    progress: IngestProgress | None = None,
) -> UnitResult:
    """Ingest and answer one unit; arm failures are `error` results, as in a serial run.

    `limiters` makes the deployments' rate limiters (default: in this process);
    `progress` hears the arms' ingestion progress (`ArmServices.progress`).
    """
    from bench.providers.factory import build_providers
    from bench.remote.stage import local_run_dir, remote_run
    from bench.run import resume
    from bench.run.arm_setup import open_arms
    from bench.run.directory import RunDirectory
    from bench.run.settings import arm_specs

    started, cfg = time.perf_counter(), task.cfg
    run_dir = RunDirectory(Path(local_run_dir(cfg, task.run_dir)))
    remote = remote_run(cfg)  # out=s3://: this node's staging folder, synced per unit
    if remote:
        remote.pull_unit(task.unit)
    run_dir.record_provenance = dict(task.record_provenance)
    outcome = RunOutcome(run_dir=run_dir.path)
    if resume.nothing_pending([task.unit.conversation], cfg, run_dir):  # no provider needed
        tick(0, 0, task.unit.questions)
        return UnitResult(
            unit_id=task.unit.unit_id,
            position=task.unit.position,
            questions=task.unit.questions,
            seconds=time.perf_counter() - started,
        )
    providers = build_providers(cfg.provider, run_dir.path, limiters)
    try:
        step = answer_step(cfg, task.prompt, providers)
        specs = arm_specs(cfg)
        arms = open_arms(specs, cfg, providers, step.tokens, run_dir.path, progress=progress)
        try:
            run_conversation(task.unit.conversation, arms, step, cfg, run_dir, outcome, tick=tick)
        finally:
            for arm in arms.values():
                arm.close()
        accounting = providers.accounting()
    finally:
        providers.close()
    if remote:
        remote.push_unit(task.unit)
    return UnitResult(
        unit_id=task.unit.unit_id,
        position=task.unit.position,
        **vars(outcome.counts()),
        accounting=accounting,
        health=ext_health.table_to_json(outcome.health),
        retrieval=ret_health.table_to_json(outcome.retrieval),
        seconds=time.perf_counter() - started,
        sizes=dict(outcome.sizes),
    )


def fail_unit(task: UnitTask, message: str) -> UnitResult:
    """Record a unit that could not run (worker died, retries spent) as `error` results.

    Every requested arm without an `ok` result gets `error` with `message`, exactly as
    an arm whose ingestion failed locally; earlier `ok` results are kept, and a re-run
    retries the errors like any other.
    """
    from bench.remote.stage import local_run_dir, remote_run
    from bench.run.directory import RunDirectory

    run_dir = RunDirectory(Path(local_run_dir(task.cfg, task.run_dir)))
    remote = remote_run(task.cfg)
    if remote:  # the unit as its last attempt left it (maybe on another node)
        remote.pull_unit(task.unit)
    result = UnitResult(unit_id=task.unit.unit_id, position=task.unit.position, first_error=message)
    for question in task.unit.conversation.questions:
        record = run_dir.load_record(question)
        results: dict[str, ArmResult] = dict(record.arms) if record else {}
        missing = [n for n in task.cfg.arms if n not in results or results[n].status != OK]
        result.questions += 1
        if not missing:
            continue
        results.update({name: ArmResult.failed(message) for name in missing})
        ordered = {n: results[n] for n in sorted(results, key=arm_order(task.cfg))}
        new = question_record(question, task.cfg.dataset.name, ordered, task.record_provenance)
        note_record(run_dir.path, question.file_stem, new)
        write_record(run_dir.path, question.file_stem, new)
        result.written += 1
        result.errors += len(missing)
    if remote:
        remote.push_unit(task.unit)
    return result
