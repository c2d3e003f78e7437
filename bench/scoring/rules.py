"""The offline binary outcome rule, shared by the scorer and the summariser (stdlib only)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

DEFAULT_F1_THRESHOLD = 0.5
F1_OUTCOME_PREFIX = "f1>="


def f1_outcome_name(threshold: float) -> str:
    """The name of the F1 rule, e.g. `f1>=0.5`; recorded in `ArmResult.outcome`."""
    return f"{F1_OUTCOME_PREFIX}{threshold:g}"


def threshold_from_outcome(name: str | None) -> float | None:
    """The threshold of an `f1>=<t>` outcome name; None for any other rule (a judge)."""
    if not name or not name.startswith(F1_OUTCOME_PREFIX):
        return None
    try:
        return float(name[len(F1_OUTCOME_PREFIX) :])
    except ValueError:
        return None


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
