"""Run judges over answer sets of known truth and count what each accepted, per group.

A *judge* here is anything that says accept/reject for (question, answer): the offline
rule (`f1>=t`: `bench.scoring.locomo.score_answer` then `outcome_from_f1`, the run's
own rule), an LLM judge built as a run builds it (its runs' majority,
`bench.judge.batch.majority_verdicts`; cached like every judge call), or the
verdicts published with an answer file (`published:<file>`, the majority of the file's
`llm_judgments`). For every judge, set and group (LoCoMo category or LongMemEval type,
plus `all`) a `Cell` holds n (answers with a verdict), accepted, and answers without a
verdict (judge error, unparseable, skipped). The acceptance rate's interval is Wilson's
95% (`bench.summarise.stats.wilson_interval`). On a `wrong` set the rate is the
false-accept rate; on a `right` set, 1 − rate is the false-reject rate.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bench.calibrate.sets import AnswerSet, Item, group_key
from bench.judge.batch import majority_verdicts
from bench.judge.protocol import Judge
from bench.scoring.locomo import outcome_from_f1, score_answer
from bench.scoring.rules import f1_outcome_name, majority
from bench.summarise.stats import wilson_interval

Verdicts = Callable[[Sequence[Item]], list[bool | None]]
"""A judge as a function: one verdict (None: none) per item, in order."""
ALL = "all"


@dataclass(frozen=True)
class Cell:
    """One judge on one set, within one group (or `all`)."""

    judge: str
    """The judge's name (`f1>=0.5`, a judge id, `published:<file>`)."""
    set: str
    """The answer set's name."""
    truth: str
    """`right` or `wrong`: what every answer in the set is."""
    group: str
    """LoCoMo category or LongMemEval type, or `all`."""
    n: int
    """Answers with a verdict."""
    accepted: int
    """Of those, accepted."""
    no_verdict: int
    """Answers without a verdict (error, unparseable, skipped): not in n."""

    @property
    def rate(self) -> float | None:
        """Accepted / n; None when n = 0."""
        return self.accepted / self.n if self.n else None

    @property
    def ci(self) -> tuple[float, float] | None:
        """Wilson 95% interval of the rate."""
        return wilson_interval(self.accepted, self.n)

    def to_json(self) -> dict[str, Any]:
        """The cell as calibration.json stores it."""
        ci = self.ci
        return {
            "judge": self.judge,
            "set": self.set,
            "truth": self.truth,
            "group": self.group,
            "n": self.n,
            "accepted": self.accepted,
            "no_verdict": self.no_verdict,
            "rate": self.rate,
            "ci": list(ci) if ci else None,
        }


def f1_judge(threshold: float) -> tuple[str, Verdicts]:
    """The offline rule as a judge: (name, verdicts)."""

    def verdicts(items: Sequence[Item]) -> list[bool | None]:
        return [
            outcome_from_f1(score_answer(i.answer, i.question), i.question, threshold)
            for i in items
        ]

    return f1_outcome_name(threshold), verdicts


def llm_judge(runs: Sequence[Judge], workers: int, problems: list[str]) -> Verdicts:
    """An LLM judge's runs as one judge: each item's majority verdict over its runs.

    `bench.judge.batch.majority_verdicts` asks them (its `error` and `unparseable`
    reasons appended to `problems`).
    """

    def verdicts(items: Sequence[Item]) -> list[bool | None]:
        pairs = [(i.question, i.answer) for i in items]
        return majority_verdicts(runs, pairs, workers, problems)

    return verdicts


def published_judge(published: dict[str, list[bool]]) -> Verdicts:
    """The verdicts an answer file carries: the majority of its judgments per answer."""

    def verdicts(items: Sequence[Item]) -> list[bool | None]:
        out: list[bool | None] = []
        for item in items:
            out.append(majority(published.get(item.question.question_id) or []))
        return out

    return verdicts


def cells_for(judge: str, answers: AnswerSet, verdicts: list[bool | None]) -> list[Cell]:
    """Per-group and `all` cells of one judge's verdicts on one set (groups sorted)."""
    counts: dict[str, list[int]] = {ALL: [0, 0, 0]}
    for item, verdict in zip(answers.items, verdicts, strict=True):
        for key in (ALL, group_key(item.question)):
            slot = counts.setdefault(key, [0, 0, 0])
            if verdict is None:
                slot[2] += 1
            else:
                slot[0] += 1
                slot[1] += bool(verdict)
    order = [ALL, *sorted(k for k in counts if k != ALL)]
    return [Cell(judge, answers.name, answers.truth, k, *counts[k]) for k in order]


def calibrate(
    judges: dict[str, Verdicts], sets: Sequence[AnswerSet], only: dict[str, str] | None = None
) -> list[Cell]:
    """Every judge over every set: the cells, judge by judge, set by set.

    `only` restricts a judge to one set (a file's published verdicts judge that file only).
    """
    only = only or {}
    return [
        cell
        for name, verdicts in judges.items()
        for answers in sets
        if only.get(name, answers.name) == answers.name
        for cell in cells_for(name, answers, verdicts(answers.items))
    ]
