"""The judge seam: what decides an answer's verdict, typed like inspect_ai's `Scorer`.

A `Judge` is made whole by its constructor and never patched afterwards. It carries
`spec` (`JudgeSpec`: the configuration and asks it was built from, enough to build it
again), `meta` (`JudgeMeta`: what run.json and the summary say of it) and its identity
(`judge_id`, `model`, `prompt_hash`: what every verdict is stamped with and what resume
compares). `with_run(judge_id, run)` is the same judge as run k of `judges.N.runs`
(stored under `<id>#<k>`, cached under its own key, `bench.scoring.judge_runs`), and
`judge(question, answer, repeat)` returns a `Judgement` and never raises.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, Self

from bench.config import JudgeConfig
from bench.records import Judgement
from bench.runmeta import JudgeMeta
from bench.scoring.judge_runs import split_run_id
from bench.types import Question


@dataclass(frozen=True)
class JudgeSpec:
    """What a judge is built from: `bench.judge.judge_set.rebuild(spec, chat)` makes it again."""

    config: JudgeConfig
    """The judge's entry in `cfg.judges` (kind, prompt, endpoint, runs)."""
    attempts: int = 2
    """Asks per answer before a verdict stays unparseable (`scoring.judge_attempts`)."""
    judge_id: str = ""
    """The id this run's verdicts are stored under (`<id>#<k>`); '' means `config.judge_id`."""
    run: int = 1
    """Which of the judge's `runs` this is (its own cache key for k >= 2)."""


class JudgeIdentity(Protocol):
    """What a verdict is stamped with and resume compares (a built judge or a `JudgeKey`)."""

    @property
    def judge_id(self) -> str:
        """The id its verdicts are stored under (a run's `<id>#<k>`)."""
        ...

    @property
    def model(self) -> str:
        """The judging model."""
        ...

    @property
    def prompt_hash(self) -> str:
        """SHA-256 of the prompt file (an official judge: of its upstream files)."""
        ...


class Judge(JudgeIdentity, Protocol):
    """One run of one judge: armbench's LLM judge or an official one."""

    @property
    def spec(self) -> JudgeSpec:
        """The configuration, asks and run it was built from."""
        ...

    @property
    def meta(self) -> JudgeMeta:
        """What run.json records of the judge (its base id; `runs` counted by `judge_meta`)."""
        ...

    def with_run(self, judge_id: str, run: int) -> Self:
        """The same judge as run `run`, stored under `judge_id`, cached under its own key."""
        ...

    def judge(self, question: Question, answer: str, repeat: int = 0) -> Judgement:
        """The verdict on `answer` (`repeat` r >= 1 cached under its own key); never raises."""
        ...


def judge_run_ids(judges: Sequence[JudgeIdentity], judge_id: str) -> list[str]:
    """The ids the built `judges` store `judge_id`'s verdicts under (its runs, in order)."""
    return [j.judge_id for j in judges if split_run_id(j.judge_id)[0] == judge_id]
