"""run.json of a session: what it knows about the run, costs summed over sessions, health.

Shared by the in-process pipeline and the fan-out parent (`bench.run.fan_out`), which
builds no provider: `run_meta` takes the answerer's model and the judges' keys as values.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from bench.config import RunConfig
from bench.loaders import dataset_stats
from bench.run.answer_prompt import AnswerPrompt
from bench.run.directory import RunDirectory, add_accounting, outcome_rule
from bench.run.repeat_plan import plan_repeats
from bench.runmeta import DatasetMeta, JudgeMeta, ProviderMeta, RunMeta, read_run_meta
from bench.scoring import health as ext_health
from bench.scoring import retrieval_health as ret_health
from bench.scoring.errata import errata_meta
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
    earlier: dict[str, Any] = field(default_factory=dict)
    """Costs of earlier sessions plus finished worker units, summed into every save."""

    def __post_init__(self) -> None:
        self.earlier = self.run_dir.previous_accounting()
        previous, _ = read_run_meta(self.run_dir.run_json)
        self.outcome.health = ext_health.table_from_json(previous and previous.extraction_health)
        self.outcome.retrieval = ret_health.table_from_json(previous and previous.retrieval_health)

    def save(self) -> None:
        """Write run.json now (atomically, secrets scrubbed)."""
        totals = add_accounting(self.earlier, self.accounting())
        health = ext_health.table_to_json(self.outcome.health)
        retrieval = ret_health.table_to_json(self.outcome.retrieval)
        meta = replace(self.meta, accounting=totals, extraction_health=health,
                       retrieval_health=retrieval)  # fmt: skip
        self.run_dir.write_run_json(self.cfg, self.ident, meta)


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
        judges=[JudgeMeta(j.judge_id, j.model, j.prompt_hash) for j in judges],
        outcome=outcome_rule(cfg),
        warnings=_judge_warnings(cfg),
        repeats=plan_repeats(cfg).meta(),
    )
