"""The offline binary outcome rule, shared by the scorer and the summariser (stdlib only)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

SCORED_CATEGORIES = frozenset({1, 2, 3, 4})
"""LoCoMo categories scored as the field reports them (1-4; 5, adversarial, apart)."""

DEFAULT_F1_THRESHOLD = 0.5
F1_OUTCOME_PREFIX = "f1>="
JUDGE_OUTCOME_PREFIX = "judge:"
MAJORITY_OUTCOME_PREFIX = "majority:"


@dataclass(frozen=True)
class Outcome:
    """The rule that sets `correct`: an F1 threshold, one judge's verdict, or a majority.

    The majority is over a judge's repeated runs (`<id>#1 .. <id>#R`, e.g. imported
    results). Serialised in exactly one place (`name`: `f1>=0.5`, `judge:<id>` or
    `majority:<id>`, the string stored in `ArmResult.outcome` and `run.json`) and parsed
    in exactly one place (`parse`).
    """

    f1_threshold: float | None = None
    """Correct iff official F1 >= this (abstention items: iff the answer abstained)."""
    judge_id: str | None = None
    """Correct iff this judge's verdict says so (set instead of `f1_threshold`)."""
    majority_of: str | None = None
    """Correct iff more than half of the verdicts `<id>#k` say so (a tie is not correct)."""

    @classmethod
    def for_scoring(cls, primary_judge: str | None, f1_threshold: float) -> Outcome:
        """The primary judge's rule when one is named, else the F1 rule."""
        return cls(judge_id=primary_judge) if primary_judge else cls(f1_threshold=f1_threshold)

    @property
    def name(self) -> str:
        """`judge:<id>` or `f1>=<threshold>` (threshold printed with `:g`)."""
        if self.judge_id:
            return f"{JUDGE_OUTCOME_PREFIX}{self.judge_id}"
        if self.majority_of:
            return f"{MAJORITY_OUTCOME_PREFIX}{self.majority_of}"
        return f"{F1_OUTCOME_PREFIX}{self.f1_threshold:g}"

    @classmethod
    def parse(cls, name: str | None) -> Outcome | None:
        """The rule a stored name denotes; None for an empty or unknown name."""
        if name and name.startswith(JUDGE_OUTCOME_PREFIX) and len(name) > len(JUDGE_OUTCOME_PREFIX):
            return cls(judge_id=name[len(JUDGE_OUTCOME_PREFIX) :])
        if name and name.startswith(MAJORITY_OUTCOME_PREFIX) and name != MAJORITY_OUTCOME_PREFIX:
            return cls(majority_of=name[len(MAJORITY_OUTCOME_PREFIX) :])
        if name and name.startswith(F1_OUTCOME_PREFIX):
            try:
                return cls(f1_threshold=float(name[len(F1_OUTCOME_PREFIX) :]))
            except ValueError:
                return None
        return None


def majority(verdicts: list[bool]) -> bool | None:
    """True iff more than half of `verdicts` are true; None when there are none.

    A tie (possible only with an even number of runs) is not a majority: the answer is
    not counted correct when the judge runs split evenly.
    """
    if not verdicts:
        return None
    return 2 * sum(verdicts) > len(verdicts)


def f1_outcome_name(threshold: float) -> str:
    """The name of the F1 rule, e.g. `f1>=0.5`; recorded in `ArmResult.outcome`."""
    return Outcome(f1_threshold=threshold).name


def threshold_from_outcome(name: str | None) -> float | None:
    """The threshold of an `f1>=<t>` outcome name; None for any other rule (a judge)."""
    outcome = Outcome.parse(name)
    return outcome.f1_threshold if outcome else None


def f1_rule(scores: Mapping[str, Any], *, abstention_item: bool, threshold: float) -> bool | None:
    """Correct iff the answer abstained (abstention items) or `scores["f1"] >= threshold`.

    Abstention items are LoCoMo category 5 and LongMemEval `_abs` questions, where the
    right answer is to say the information is not there. Returns None when the needed
    score is missing (nothing to decide on).
    """
    if abstention_item:
        abstained = scores.get("abstained")
        return None if abstained is None else bool(abstained)
    f1 = scores.get("f1")
    return None if f1 is None else float(f1) >= threshold
