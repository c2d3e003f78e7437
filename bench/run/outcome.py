"""What a run, or one unit of it, did: questions seen, records written, errors left.

`RunOutcome` is the run's tally (in this process); `UnitResult` is one unit's, made by a
worker process or a Ray task and summed into the run's with `RunOutcome.add_unit`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from bench.answer import repeats as run_repeats
from bench.records import ERROR, OK, UNPARSEABLE, QuestionRecord
from bench.scoring import health as ext_health
from bench.scoring import retrieval_health as ret_health

Tick = Callable[[int, int, int], None]
"""`tick(done, errors, resumed)`: questions finished now, their arm errors, and questions
found already finished by an earlier session."""


@dataclass
class Counts:
    """The one tally of questions, records and errors, for a run and for each of its units."""

    questions: int = 0
    """Questions seen."""
    written: int = 0
    """Records written."""
    errors: int = 0
    """Requested arms' results still in `error` afterwards."""
    first_error: str | None = None
    """The first such error message (or why a unit failed); None when there is none."""
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
            failed = failed or [b.error or "error" for b in result.budgets if b.status == ERROR]
            if failed:  # an arm with repeats in error counts once
                self.errors += 1
                self.first_error = self.first_error or failed[0]
            if result.status == OK:
                statuses = [j.status for j in result.judgements.values()]
                self.judge_errors += statuses.count(ERROR)
                self.judge_unparseable += statuses.count(UNPARSEABLE)

    def add(self, other: Counts) -> None:
        """Add another tally (a unit's) to this one; the first error seen is kept."""
        self.questions += other.questions
        self.written += other.written
        self.errors += other.errors
        self.first_error = self.first_error or other.first_error
        self.judge_errors += other.judge_errors
        self.judge_unparseable += other.judge_unparseable

    def counts(self) -> Counts:
        """A copy of just the tally (e.g. to send a run's counts back as a unit's)."""
        return Counts(
            self.questions,
            self.written,
            self.errors,
            self.first_error,
            self.judge_errors,
            self.judge_unparseable,
        )


@dataclass(kw_only=True)
class UnitResult(Counts):
    """What one unit did (summed into the run's `RunOutcome` and accounting)."""

    unit_id: str
    """The unit's id (its conversation id)."""
    position: int
    """The unit's index in the dataset's order (see `Unit.position`)."""
    accounting: dict[str, object] = field(default_factory=dict)
    """The providers' usage and cost accounting for this unit; empty on failure."""
    health: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)
    """This unit's extraction health (`bench.scoring.health.table_to_json` form: plain data,
    so it pickles to the parent process or the Ray driver); empty when nothing ingested."""
    retrieval: dict[str, dict[str, dict[str, object]]] = field(default_factory=dict)
    """This unit's retrieval health, this session only (`retrieval_health.table_to_json`
    form, plain data like `health`)."""
    seconds: float = 0.0
    """Wall time of the unit, in seconds; 0.0 when it could not run."""
    sizes: dict[str, int] = field(default_factory=dict)
    """The unit's whole-transcript tokens, when it ran (run.json `conversation_tokens`)."""
    peak_rss_mb: float | None = None
    """Peak resident MiB of the worker process while it ran this unit (`bench.run.scale.peak`);
    None when the unit did not run in a worker (failed, or the serial loop)."""
    peak_is_unit: bool = False
    """True when that peak is the unit's own (the worker's peak was reset before it)."""


def no_tick(done: int, errors: int, resumed: int) -> None:
    """Progress sink for callers that do not track progress."""


@dataclass(kw_only=True)
class RunOutcome(Counts):
    """What a run did: its tally, its directory and the extraction health it saw."""

    run_dir: Path
    """The run directory written to."""
    health: ext_health.HealthTable = field(default_factory=dict)
    """Extraction health per arm and conversation, this session's merged over earlier ones."""
    retrieval: ret_health.RetrievalTable = field(default_factory=dict)
    """Retrieval health per arm and unit, this session's counts added to earlier ones'."""
    sizes: dict[str, int] = field(default_factory=dict)
    """Unit -> whole-transcript tokens, counted this session for the units it ran."""

    def add_unit(self, unit: UnitResult) -> None:
        """Add the counts and health of a unit run by a worker process or a Ray task."""
        self.add(unit)
        for arm, per_conv in ext_health.table_from_json(unit.health).items():
            self.health.setdefault(arm, {}).update(per_conv)  # this session's over earlier
        ret_health.merge(self.retrieval, ret_health.table_from_json(unit.retrieval))
        self.sizes.update(unit.sizes)

    def for_unit(self, unit_id: str) -> RunOutcome:
        """A fresh tally for one unit run beside others, seeded with this run's health of it.

        The unit fills it as `run_conversation` fills a serial run's outcome;
        `merge_unit` then lays it back, so the result is the serial run's.
        """
        return RunOutcome(
            run_dir=self.run_dir,
            health={a: {unit_id: t[unit_id]} for a, t in self.health.items() if unit_id in t},
            retrieval={a: {unit_id: t[unit_id]} for a, t in self.retrieval.items() if unit_id in t},
        )

    def merge_unit(self, unit: RunOutcome) -> None:
        """Add a `for_unit` tally's counts; its health entries replace this run's."""
        self.add(unit)
        for arm, per_conv in unit.health.items():
            self.health.setdefault(arm, {}).update(per_conv)
        for arm, per_unit in unit.retrieval.items():
            self.retrieval.setdefault(arm, {}).update(per_unit)
        self.sizes.update(unit.sizes)
