"""Independent judge runs (`judges.N.runs=R`): ids, cache keys and the primary outcome.

The field reports an LLM judge as the mean ± SD of three runs, and sometimes their
majority. A judge with `runs: R` is asked R times per answer, each run a real call
with its own response-cache key (`run_version`: run 1 keeps the single-run key, so a
one-run cache is reused; run k >= 2 adds `#run<k>`), and run k's verdict is stored under
`<judge_id>#<k>` (k = 1 .. R). `runs: 1` keeps the plain id.

The run's binary outcome (`correct`) under such a judge is the *majority* of its R
verdicts: the value held by more than R/2 runs. R must be odd, so R verdicts always
have a majority; run #1 alone would throw away two thirds of the measurement, and the
majority is the figure the field quotes beside the mean. While fewer than a majority of
runs agree (runs in error, awaiting a resume) the outcome is None (not counted).
Standard library only (the summariser reads ids with it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

RUN_SEPARATOR = "#"
OK_STATUS = "ok"


def run_ids(judge_id: str, runs: int) -> list[str]:
    """The ids R runs are stored under: `[judge_id]` for one run, else `judge_id#1..#R`."""
    if runs == 1:
        return [judge_id]
    return [f"{judge_id}{RUN_SEPARATOR}{k}" for k in range(1, runs + 1)]


def run_version(version: str, run: int) -> str:
    """The prompt version run `run` is cached under (`<version>#run<k>` for k >= 2)."""
    return f"{version}#run{run}" if run > 1 else version


def split_run_id(judgement_id: str) -> tuple[str, int | None]:
    """(`judge_id`, k) of `judge_id#k`; (id, None) for an id without a run suffix."""
    base, sep, tail = judgement_id.rpartition(RUN_SEPARATOR)
    if sep and base and tail.isdigit() and int(tail) >= 1:
        return base, int(tail)
    return judgement_id, None


class Vote(Protocol):
    """What a majority reads of a verdict (`Judgement`, or the summariser's own view)."""

    @property
    def status(self) -> str:
        """`ok` when the verdict counts."""
        ...

    @property
    def verdict(self) -> bool | None:
        """The verdict; None when there is none."""
        ...


def group_verdict(
    judgements: Mapping[str, Vote], judge_id: str, ids: Sequence[str] | None = None
) -> bool | None:
    """The judge's outcome: the majority of its runs' `ok` verdicts (one run: its verdict).

    `judgements` maps ids to objects with `status` and `verdict`. `ids`: the run ids the
    judge is configured with now (`run_ids`), so verdicts of another run count left in a
    record never vote; None (a reader without the configuration) takes the plain id when
    stored, else every stored `<judge_id>#<k>`. Majority: the value held by more than
    half of `ids`, so a run in error or missing counts against both values.
    """
    if ids is None:
        stored = [jid for jid in judgements if split_run_id(jid)[0] == judge_id]
        ids = [judge_id] if judge_id in judgements else stored
    votes = [judgements.get(jid) for jid in ids]
    ok = [
        bool(j.verdict)
        for j in votes
        if j is not None and j.status == OK_STATUS and j.verdict is not None
    ]
    for value in (True, False):
        if ids and 2 * ok.count(value) > len(ids):
            return value
    return None


def check_runs(judge_id: str, runs: int) -> str | None:
    """Why `runs` is not a usable run count (odd, at least 1), or None."""
    if runs < 1 or runs % 2 == 0:
        return (
            f"judges.{judge_id}.runs={runs}: use an odd number of runs (1, 3, 5) so the "
            "majority verdict is always defined"
        )
    return None
