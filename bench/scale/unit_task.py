"""One unit, run anywhere: build providers and arms, run the conversation, report counts.

`run_unit` is a plain function of picklable values, so the same code runs in this
process, in a `workers=N` child process and as a Ray task. Each call builds its own
providers, arms and stores (under `<out>/stores/<arm>/<unit>/`, as in a serial run),
so a unit is isolated from every other; the answers are the serial run's because every
input is the same and the offline models are deterministic.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.config import RunConfig
from bench.providers.ratelimit import LimiterFactory
from bench.records import OK, ArmResult, write_record
from bench.run import health as ext_health
from bench.run.answer_prompt import AnswerPrompt
from bench.scale.units import Unit

Tick = Callable[[int, int, int], None]
"""`tick(done, errors, resumed)`: questions finished now, their arm errors, and questions
found already finished by an earlier session."""


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


@dataclass
class UnitResult:
    """What one unit did (summed into the run's `RunOutcome` and accounting)."""

    unit_id: str
    """The unit's id (its conversation id)."""
    position: int
    """The unit's index in the dataset's order (see `Unit.position`)."""
    questions: int = 0
    """Questions seen."""
    written: int = 0
    """Records written."""
    errors: int = 0
    """Requested arms' results still in `error` after this unit."""
    first_error: str | None = None
    """The first such error message (or why the unit failed); None when none."""
    judge_errors: int = 0
    """Verdicts whose judge call failed (see `RunOutcome.judge_errors`)."""
    judge_unparseable: int = 0
    """Verdicts recorded as `unparseable` (see `RunOutcome.judge_unparseable`)."""
    accounting: dict[str, Any] = field(default_factory=dict)
    """The providers' usage and cost accounting for this unit; empty on failure."""
    health: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)
    """This unit's extraction health (`bench.run.health.table_to_json` form: plain data,
    so it pickles to the parent process or the Ray driver); empty when nothing ingested."""
    seconds: float = 0.0
    """Wall time of the unit, in seconds; 0.0 when it could not run."""


def _no_tick(done: int, errors: int, resumed: int) -> None:
    """Progress sink for callers that do not track progress."""


def run_unit(
    task: UnitTask, tick: Tick = _no_tick, limiters: LimiterFactory | None = None
) -> UnitResult:
    """Ingest and answer one unit; arm failures are `error` results, as in a serial run.

    `limiters` makes the deployments' rate limiters (default: in this process).
    """
    from bench.providers.factory import build_providers
    from bench.remote.stage import local_run_dir, remote_run
    from bench.run import pipeline, resume
    from bench.run.directory import RunDirectory
    from bench.run.settings import arm_specs

    started = time.perf_counter()
    cfg = task.cfg
    run_dir = RunDirectory(Path(local_run_dir(cfg, task.run_dir)))
    remote = remote_run(cfg)  # out=s3://: this node's staging folder, synced per unit
    if remote:
        remote.pull_unit(task.unit)
    run_dir.record_provenance = dict(task.record_provenance)
    outcome = pipeline.RunOutcome(run_dir.path)
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
        step = pipeline._answer_step(cfg, task.prompt, providers)
        arms = pipeline.open_arms(arm_specs(cfg), cfg, providers, step.tokens, run_dir.path)
        try:
            pipeline.run_conversation(
                task.unit.conversation, arms, step, cfg, run_dir, outcome, tick=tick
            )
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
        questions=outcome.questions,
        written=outcome.written,
        errors=outcome.errors,
        first_error=outcome.first_error,
        judge_errors=outcome.judge_errors,
        judge_unparseable=outcome.judge_unparseable,
        accounting=accounting,
        health=ext_health.table_to_json(outcome.health),
        seconds=time.perf_counter() - started,
    )


def fail_unit(task: UnitTask, message: str) -> UnitResult:
    """Record a unit that could not run (worker died, retries spent) as `error` results.

    Every requested arm without an `ok` result gets `error` with `message`, exactly as
    an arm whose ingestion failed locally; earlier `ok` results are kept, and a re-run
    retries the errors like any other.
    """
    from bench.remote.stage import local_run_dir, remote_run
    from bench.run import pipeline
    from bench.run.directory import RunDirectory

    run_dir = RunDirectory(Path(local_run_dir(task.cfg, task.run_dir)))
    remote = remote_run(task.cfg)
    if remote:  # the unit as its last attempt left it (maybe on another node)
        remote.pull_unit(task.unit)
    result = UnitResult(task.unit.unit_id, task.unit.position, first_error=message)
    order = {name: i for i, name in enumerate(task.cfg.arms)}
    for question in task.unit.conversation.questions:
        record = run_dir.load_record(question)
        results: dict[str, ArmResult] = dict(record.arms) if record else {}
        missing = [n for n in task.cfg.arms if n not in results or results[n].status != OK]
        result.questions += 1
        if not missing:
            continue
        results.update({name: ArmResult.failed(message) for name in missing})
        ordered = {n: results[n] for n in sorted(results, key=lambda n: (order.get(n, 99), n))}
        new = pipeline._record(question, task.cfg, ordered, dict(task.record_provenance))
        write_record(run_dir.path, question.file_stem, new)
        result.written += 1
        result.errors += len(missing)
    if remote:
        remote.push_unit(task.unit)
    return result
