"""Which baseline arm each arm is paired with. Standard library only.

Pairing against a baseline run is, by default, the same arm in two runs (a regression
check). A published system imported with `bench.published` is one arm under its own
name, so it is paired differently: with `--baseline-arm NAME`, or automatically when
the baseline holds exactly one arm and its results are imported, every arm of this
run is paired with that one arm (on the questions both have).
"""

from __future__ import annotations

from bench.records import QuestionRecord


class BaselineArmError(ValueError):
    """`--baseline-arm` names no arm of the baseline."""


def baseline_pairs(
    ours: list[str], theirs: list[str], records: list[QuestionRecord], chosen: str | None
) -> tuple[dict[str, str], str | None]:
    """(our arm -> baseline arm, the one baseline arm or None for same-name pairing)."""
    if chosen is not None:
        if chosen not in theirs:
            raise BaselineArmError(
                f"--baseline-arm {chosen}: the baseline has no such arm "
                f"(it has {', '.join(theirs) or 'none'})"
            )
        return {name: chosen for name in ours}, chosen
    if len(theirs) == 1 and is_imported_arm(records, theirs[0]):
        return {name: theirs[0] for name in ours}, theirs[0]
    return {name: name for name in ours if name in theirs}, None


def is_imported_arm(records: list[QuestionRecord], arm: str) -> bool:
    """True when the arm's results in `records` are imported (the first one decides)."""
    for record in records:
        result = record.arms.get(arm)
        if result is not None:
            return result.imported is not None
    return False
