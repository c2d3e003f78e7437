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
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from bench.config import RunConfig
from bench.loaders import dataset_stats
from bench.providers.accounting import accounting_delta, add_accounting
from bench.run.answer_prompt import AnswerPrompt
from bench.run.directory import RunDirectory, outcome_rule
from bench.run.lock import run_json_lock
from bench.run.repeat_plan import plan_repeats
from bench.runmeta import DatasetMeta, ProviderMeta, RunMeta, read_run_meta
from bench.scoring import health as ext_health
from bench.scoring.errata import errata_meta
from bench.scoring.judge_set import judge_meta
from bench.tokens import TokenCounter
from bench.types import Dataset

if TYPE_CHECKING:
    from bench.run.outcome import RunOutcome

log = logging.getLogger("bench.run")


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

    def __post_init__(self) -> None:
        previous, _ = read_run_meta(self.run_dir.run_json)
        stored = previous and previous.extraction_health
        self.seed_health = ext_health.table_from_json(stored)
        self.outcome.health = ext_health.table_from_json(stored)  # a copy the session fills

    def save(self) -> None:
        """Merge this session's costs and health into run.json now (atomic, secrets scrubbed)."""
        with run_json_lock(self.run_dir.path):
            previous, _ = read_run_meta(self.run_dir.run_json)
            mine = add_accounting(self.units, self.accounting())
            totals = add_accounting(
                previous.accounting if previous else {}, accounting_delta(mine, self.saved)
            )
            health = ext_health.table_to_json(self._merged_health(previous))
            self.run_dir.write_run_json(
                self.cfg,
                self.ident,
                replace(self.meta, accounting=totals, extraction_health=health),
            )
            self.saved = mine

    def _merged_health(self, previous: RunMeta | None) -> ext_health.HealthTable:
        """run.json's health with every row this session added or changed laid over it."""
        merged = ext_health.table_from_json(previous and previous.extraction_health)
        for arm, rows in self.outcome.health.items():
            seeded = self.seed_health.get(arm, {})
            for conversation, row in rows.items():
                if seeded.get(conversation) != row:
                    merged.setdefault(arm, {})[conversation] = row
        return merged


def _judge_warnings(cfg: RunConfig) -> list[str]:
    from bench.scoring.judges import judge_model_warning

    warnings = [judge_model_warning(j, cfg.provider.answerer.model) for j in cfg.judges]
    for warning in filter(None, warnings):
        log.warning(warning)
    return [w for w in warnings if w]


def run_meta(
    cfg: RunConfig, dataset: Dataset, prompt: AnswerPrompt, answerer_model: str, judges: Any
) -> RunMeta:
    """What this session knows about the run (the run directory adds identity and dates).

    `judges`: objects with `judge_id`, `model` and `prompt_hash` (built judges, or
    `resume.JudgeKey`s where no provider is built).
    """
    return RunMeta(
        dataset=DatasetMeta(
            dataset.name, dataset.path, dataset.sha256, **errata_meta(dataset.errata)
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
        judges=judge_meta(judges, cfg.judges),
        outcome=outcome_rule(cfg),
        warnings=_judge_warnings(cfg),
        repeats=plan_repeats(cfg).meta(),
    )
