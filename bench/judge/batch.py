"""A judge's runs over many answers at once: one majority verdict per answer.

What the calibration (`bench.calibrate`) asks of an LLM judge: every run judges every
(question, answer) pair, in a thread pool of `workers`, and the pair's verdict is the
majority of the runs' `ok` verdicts (`bench.scoring.judge_runs.group_verdict`; None
while no value holds a majority). Calls are cached like every judge call.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from bench.judge.protocol import Judge
from bench.scoring.judge_runs import group_verdict, split_run_id
from bench.types import Question


def majority_verdicts(
    runs: Sequence[Judge],
    pairs: Sequence[tuple[Question, str]],
    workers: int,
    problems: list[str],
) -> list[bool | None]:
    """Each pair's majority verdict over `runs` (one judge's runs), in order.

    Each judgement in `error` or `unparseable` appends `<run id>: <reason>` to
    `problems` (`skipped` ones, outside the judge's scope, do not).
    """
    base = split_run_id(runs[0].judge_id)[0]

    def one(pair: tuple[Question, str]) -> bool | None:
        question, answer = pair
        got = {r.judge_id: r.judge(question, answer) for r in runs}
        problems.extend(
            f"{j.judge_id}: {j.error}" for j in got.values() if j.status in ("error", "unparseable")
        )
        return group_verdict(got, base)

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        return list(pool.map(one, pairs))
