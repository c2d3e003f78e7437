"""How many draws a run makes and of what (`repeats=N`; see `bench.answer.repeats`)."""

from __future__ import annotations

from dataclasses import dataclass

from bench.config import RunConfig
from bench.errors import ConfigError
from bench.runmeta import DETERMINISTIC, RepeatsMeta


@dataclass(frozen=True)
class RepeatPlan:
    """How many draws a run makes and of what."""

    count: int = 1
    """The `repeats` setting (1 = a single run)."""
    answers: bool = False
    """Re-draw answers (sampling answerer, temperature > 0)."""
    judges: bool = False
    """Re-draw LLM verdicts."""

    @property
    def active(self) -> bool:
        """True when repeats 1 .. count-1 are drawn."""
        return self.count > 1 and (self.answers or self.judges)

    @property
    def skipped(self) -> str | None:
        """`DETERMINISTIC` (with why) when repeats were asked for but nothing varies."""
        if self.count > 1 and not self.active:
            return f"{DETERMINISTIC} (offline or temperature-0 answerer, no LLM judge)"
        return None

    def meta(self) -> RepeatsMeta:
        """What run.json records about the plan."""
        return RepeatsMeta(self.count, self.answers, self.judges, self.skipped)


def plan_repeats(cfg: RunConfig) -> RepeatPlan:
    """The plan for a run's config; ConfigError when `repeats` is below 1."""
    count = cfg.repeats
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ConfigError(f"repeats={count!r}: expected a whole number >= 1 (e.g. repeats=3)")
    answerer = cfg.provider.answerer
    answers = answerer.kind != "offline" and float(answerer.temperature or 0.0) > 0.0
    judges = any(j.endpoint.kind != "offline" for j in cfg.judges)
    return RepeatPlan(count, answers, judges)
