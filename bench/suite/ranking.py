"""The ranked source ids a suite scores, from an arm's cheapest way of giving them.

A suite ranks source ids and never reads the rendered context (answers are built from
the turns themselves), so an arm that can rank without rendering may offer
`rank_sources(question) -> tuple[str, ...]`: exactly `retrieve(question)
.ranked_source_ids()`, computed without building the context block. The suite runner
uses it when present and falls back to `retrieve` otherwise, so user-added arms (which
only implement `bench.arm.Arm`) keep working unchanged. Latency (`retrieve_ms`) is then
the wall time of `rank_sources`: retrieval without rendering. Only in-process arms offer
it: a live arm's write path and service answer travel on its context.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from bench.arm import Arm
from bench.run.phases import PREDICTED_MS
from bench.types import Context, Question

RankSources = Callable[[Question], tuple[str, ...]]
"""An arm's `rank_sources`: the question's source ids, best first, without repeats."""


@dataclass(frozen=True)
class Ranking:
    """One query's ranked source ids and how long the arm took to give them."""

    ranked: tuple[str, ...]
    """Source ids, best first, without repeats (all of them: the caller cuts)."""
    ms: float
    """Wall time of the call, in milliseconds (a stored prediction's own time if given)."""
    context: Context | None
    """The full context when the arm was asked through `retrieve`, else None."""


def ranker(arm: Arm) -> RankSources | None:
    """The arm's `rank_sources` when it offers one (an optional capability), else None."""
    method = getattr(arm, "rank_sources", None)
    return method if callable(method) else None


def rank(arm: Arm, question: Question) -> Ranking:
    """Rank the question's sources: `rank_sources` when offered, else `retrieve`."""
    method = ranker(arm)
    started = time.perf_counter()
    if method is not None:
        ranked = tuple(method(question))
        return Ranking(ranked, (time.perf_counter() - started) * 1000, None)
    context = arm.retrieve(question)
    ms = float(context.meta.get(PREDICTED_MS, (time.perf_counter() - started) * 1000))
    return Ranking(tuple(context.ranked_source_ids()), ms, context)
