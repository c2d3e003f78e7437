"""run.json of a session: what it knows about the run, costs summed over sessions, health.

Shared by the in-process pipeline and the fan-out parent (`bench.run.fan_out`), which
builds no provider: `run_meta` takes the answerer's model and the judges' keys as values.

Shards (`shard=i/n`) of one run may write run.json one after the other or at the same
time, so a save never writes a total it computed earlier: under `run_json_lock` it reads
run.json again, adds this session's costs since its last save
(`accounting = on_disk + (mine_now - mine_saved)`) and lays the health rows this session
changed over the ones on disk (each shard ingests its own conversations).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TypeVar

from bench.answer.answer_prompt import AnswerPrompt
from bench.answer.repeat_plan import plan_repeats
from bench.config import RunConfig
from bench.loaders import dataset_stats
from bench.providers.accounting import accounting_delta, add_accounting
from bench.run.directory import RunDirectory, outcome_rule
from bench.run.lock import run_json_lock
from bench.runmeta import (
    DatasetMeta,
    JudgeMeta,
    ProviderMeta,
    RunMeta,
    hub_meta,
    read_run_meta,
)
from bench.scoring import health as ext_health
from bench.scoring import retrieval_health as ret_health
from bench.scoring.errata import errata_meta
from bench.tokens import TokenCounter
from bench.types import Dataset

if TYPE_CHECKING:
    from bench.run.outcome import RunOutcome

log = logging.getLogger("bench.run")
Row = TypeVar("Row")


@dataclass
class RunJson:
    """Writes run.json: this session's metadata, costs added to earlier sessions', health."""

    cfg: RunConfig
    """The run configuration (stored in run.json)."""
    run_dir: RunDirectory
    """The run directory written to."""
    ident: dict[str, Any]
    """The run's identity (`identity`)."""
    meta: RunMeta
    """What this session knows about the run (`run_meta`)."""
    outcome: RunOutcome
    """The session's outcome; its health table is seeded from run.json and saved back."""
    accounting: Callable[[], dict[str, Any]]
    """This process's providers' accounting (a fan-out's parent has none: `dict`)."""
    units: dict[str, Any] = field(default_factory=dict)
    """Costs of the worker units this session finished (fan-out), part of its own costs."""
    saved: dict[str, Any] = field(default_factory=dict)
    """This session's own costs as of its last save (already in run.json)."""
    seed_health: ext_health.HealthTable = field(default_factory=dict)
    """The health table run.json held when the session started."""
    seed_retrieval: ret_health.RetrievalTable = field(default_factory=dict)
    """The retrieval-health table run.json held when the session started."""

    def __post_init__(self) -> None:
        previous, _ = read_run_meta(self.run_dir.run_json)
        stored = previous and previous.extraction_health
        self.seed_health = ext_health.table_from_json(stored)
        self.outcome.health = ext_health.table_from_json(stored)  # a copy the session fills
        seen = previous and previous.retrieval_health
        self.seed_retrieval = ret_health.table_from_json(seen)
        self.outcome.retrieval = ret_health.table_from_json(seen)

    def save(self) -> None:
        """Merge this session's costs and health into run.json now (atomic, secrets scrubbed)."""
        with run_json_lock(self.run_dir.path):
            previous, _ = read_run_meta(self.run_dir.run_json)
            mine = add_accounting(self.units, self.accounting())
            totals = add_accounting(
                previous.accounting if previous else {}, accounting_delta(mine, self.saved)
            )
            health = ext_health.table_from_json(previous and previous.extraction_health)
            retrieval = ret_health.table_from_json(previous and previous.retrieval_health)
            meta = replace(
                self.meta,
                accounting=totals,
                extraction_health=ext_health.table_to_json(
                    laid_over(health, self.outcome.health, self.seed_health)
                ),
                retrieval_health=ret_health.table_to_json(
                    laid_over(retrieval, self.outcome.retrieval, self.seed_retrieval)
                ),
                conversation_tokens=conversation_tokens(previous, self.outcome.sizes),
            )
            self.run_dir.write_run_json(self.cfg, self.ident, meta)
            self.saved = mine


def laid_over(
    on_disk: dict[str, dict[str, Row]],
    session: dict[str, dict[str, Row]],
    seeded: dict[str, dict[str, Row]],
) -> dict[str, dict[str, Row]]:
    """run.json's table (arm -> unit -> row) with each row this session added or changed.

    Changed means unlike the row the session was seeded with; each shard writes its own
    units, so laying rows over the file never loses another shard's.
    """
    for arm, rows in session.items():
        seed = seeded.get(arm, {})
        for unit, row in rows.items():
            if seed.get(unit) != row:
                on_disk.setdefault(arm, {})[unit] = row
    return on_disk


def _judge_warnings(cfg: RunConfig) -> list[str]:
    from bench.judge.judges import judge_model_warning

    warnings = [judge_model_warning(j, cfg.provider.answerer.model) for j in cfg.judges]
    for warning in filter(None, warnings):
        log.warning(warning)
    return [w for w in warnings if w]


def run_meta(
    cfg: RunConfig,
    dataset: Dataset,
    prompt: AnswerPrompt,
    answerer_model: str,
    judges: Sequence[JudgeMeta],
) -> RunMeta:
    """What this session knows about the run (the run directory adds identity and dates).

    `judges`: one `JudgeMeta` per configured judge (`bench.judge.judge_set.judge_meta` of
    the built judges, or `key_meta` of `resume.JudgeKey`s where no provider is built).
    """
    return RunMeta(
        dataset=DatasetMeta(
            dataset.name,
            dataset.path,
            dataset.sha256,
            **errata_meta(dataset.errata),
            **hub_meta(dataset.hub),
        ),
        dataset_stats=dataset_stats(dataset),
        provider=ProviderMeta(
            name=cfg.provider.name,
            answerer_model=answerer_model,
            extractor_model=cfg.provider.extractor.model,
            embedder_model=cfg.provider.embedder.model,
        ),
        offline=cfg.provider.answerer.kind == "offline",
        prompt={"path": prompt.path, "sha256": prompt.sha256},
        tokenizer=TokenCounter().name,
        judges=list(judges),
        outcome=outcome_rule(cfg),
        warnings=_judge_warnings(cfg),
        repeats=plan_repeats(cfg).meta(),
        sample=dataset.sample.to_json() if dataset.sample else {},
    )


def conversation_tokens(previous: RunMeta | None, session: dict[str, int]) -> dict[str, int]:
    """run.json's unit sizes (whole integers only) with this session's counts laid over."""
    kept = previous.conversation_tokens if previous else {}
    return {**{k: v for k, v in kept.items() if v.__class__ is int}, **session}
