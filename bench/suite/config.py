"""Typed configuration of `python -m bench.suite` (conf/suite.yaml)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from bench.config import AnswerConfig, DatasetConfig, LimitConfig, ProviderConfig, RunConfig
from bench.errors import ConfigError


@dataclass
class SuiteSection:
    """Which suite to run and how to score it."""

    path: str | None = None
    """A suite file, or a folder (adapter-specific: BEIR folder, folder of suite files)."""
    adapter: str = "novamem"
    """`novamem` (the suite format), `beir`, `locomo`, `longmemeval`, `rag`, `niah`,
    `beam` (a BEAM tier folder) or `locomo_plus` (`locomo_plus.json`, stitched with `seed`)."""
    cutoffs: list[int] = field(default_factory=lambda: [10, 20, 50, 200])
    """The K values every ranked metric is reported at; the largest is retrieved."""
    split: str = "test"
    """BEIR qrels split (`qrels/<split>.tsv`); for `beam`, the tier label when it names one."""
    seed: int | None = 0
    """LoCoMo-Plus stitching seed (as `dataset.seed`): the same seed, the same suites."""
    answer: bool = False
    """Ask the configured answerer once per query and cutoff with the top-K memories."""


@dataclass
class SuiteConfig:
    """The whole resolved suite-run configuration."""

    suite: SuiteSection
    """Which suite to run and how to score it."""
    provider: ProviderConfig
    """The model endpoints and cache."""
    arms: list[str]
    """Names of the arms to run, in order."""
    arm_options: dict[str, Any]
    """Raw per-arm option tables, keyed by arm name (typed by each arm kind)."""
    out: str
    """Output folder the suite results are written to."""
    answer: AnswerConfig = field(default_factory=AnswerConfig)
    """Answer prompt and context budget (used when `suite.answer` is true)."""
    progress: bool = True
    """Show a progress bar."""
    phase: str = "all"
    """`all`, `predict` (ingest + retrieve, stored per query) or `evaluate` (score and
    answer the stored retrievals; builds no arm). See bench/suite/phased.py."""
    limit: LimitConfig = field(default_factory=LimitConfig)
    """`limit.conversations`, `limit.questions`, `limit.per_conversation` as `bench.run`
    takes them, on every adapter: a suite is a conversation, its queries its questions."""
    stores: str | None = None
    """Folder holding `stores/<arm>/<suite>`; default `out` (a multirun: the sweep folder,
    so every job of a sweep over retrieval knobs reuses one ingestion)."""

    def as_run_config(self, name: str) -> RunConfig:
        """The run configuration the shared arm plumbing (open_arms, arm_specs) reads."""
        return RunConfig(
            dataset=DatasetConfig(name=name, loader=f"suite:{self.suite.adapter}"),
            provider=self.provider,
            arms=list(self.arms),
            arm_options=self.arm_options,
            out=self.out,
            answer=self.answer,
            progress=self.progress,
            phase=self.phase,
        )


def load_suite_config(cfg: DictConfig) -> SuiteConfig:
    """Merge the composed config onto the SuiteConfig schema; unknown keys are errors."""
    try:
        plain = OmegaConf.to_container(cfg, resolve=True)
        assert isinstance(plain, dict)
        plain.pop("hydra", None)
        merged = OmegaConf.merge(OmegaConf.structured(SuiteConfig), plain)
        typed = OmegaConf.to_object(merged)
    except OmegaConfBaseException as exc:
        from bench.run.hydra_job import override_error

        schema = OmegaConf.structured(SuiteConfig)
        raise override_error(exc, lambda: schema, "config") from None
    assert isinstance(typed, SuiteConfig)
    if not typed.suite.path:
        raise ConfigError("suite.path is not set: pass suite.path=<suite file or folder>")
    if not typed.suite.cutoffs or any(k < 1 for k in typed.suite.cutoffs):
        raise ConfigError(f"suite.cutoffs={typed.suite.cutoffs}: give positive integers")
    typed.suite.cutoffs = sorted(set(typed.suite.cutoffs))
    from bench.run.preflight import check_limits

    check_limits(typed.limit)
    return typed
