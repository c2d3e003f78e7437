r"""BEAM scoring arithmetic, as upstream's `src/evaluation/compute_metrics.py` defines it.

Pure functions; the LLM calls are behind `BeamJudge` (the hook the official-judge
machinery fills: it formats upstream's rubric-judge template, read from the fetched file,
once per rubric item, and upstream's yes/no event-equivalence question).

Rubric (every ability): each rubric item is judged on its own on the scale
{0, 0.5, 1}; the question's score is the mean over its items. Upstream casts each
item's score with `int()` before summing for nine abilities, so a 0.5 counts 0, but keeps
it as a float for `event_ordering`: `rubric_scores` returns that (`upstream`) and the
mean with every 0.5 kept (`kept`, what several ports report) side by side.

Event ordering (higher is better), with `ref` the rubric items in order and `sys` the
reply's lines (`reply.split("\n")`, blank lines included, as upstream) after each line
is replaced by the first unused reference item it matches (`align`):

    tp = |set(ref) ∩ set(sys)|,  fp = #sys items not in ref,  fn = #ref items not in sys
    P = tp/(tp+fp), R = tp/(tp+fn), F1 = 2PR/(P+R)    (0 when a denominator is 0)
    union = ref then sys, first occurrences; rank(seq)[u] = 1-based place of u in seq
            (last occurrence), len(union)+1 when absent
    τ_b = Kendall's tau-b of (rank(ref), rank(sys)) over union (scipy, variant "b")
    final = (τ_b + 1)/2 · F1

τ_b is undefined when either ranking is constant (e.g. one reference item): upstream
then gets NaN and so does its final score; here both are None ("undefined").
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from bench.scoring.reach import context_terms
from bench.text import content_terms
from bench.types import Question

EVENT_ORDERING = "event_ordering"
"""The one ability whose rubric item scores upstream keeps as floats."""
_RUBRIC_PREFIX = re.compile(r"^\s*LLM response should [a-z ]+:\s*", re.IGNORECASE)


@dataclass(frozen=True)
class RubricScore:
    """A question's rubric score under both published readings of a 0.5 item."""

    upstream: float
    """Upstream's: item scores cast with `int()` (0.5 → 0) except for event ordering."""
    kept: float
    """Every item's score as judged (0.5 kept), averaged."""
    items: int
    """Rubric items judged."""


@dataclass(frozen=True)
class EventOrderScore:
    """Upstream's event-ordering figures for one reply."""

    precision: float
    """Aligned reply items that are reference items / reply items."""
    recall: float
    """Reference items found in the reply / reference items."""
    f1: float
    """Harmonic mean of precision and recall (0 when both are 0)."""
    tau_b: float | None
    """Kendall's tau-b of the two rankings; None when undefined (upstream: NaN)."""
    final: float | None
    """(τ_b + 1)/2 · F1, upstream's event-ordering score; None when τ_b is undefined."""


class BeamJudge(Protocol):
    """The LLM side of BEAM scoring: filled by the official-judge machinery (not here)."""

    def score_item(self, rubric_item: str, response: str) -> float:
        """Upstream's rubric judge on one item: 0.0, 0.5 or 1.0."""
        ...

    def same_event(self, reference: str, system: str) -> bool:
        """Upstream's yes/no question: do the two snippets describe the same event?"""
        ...


def rubric_scores(ability: str, item_scores: Sequence[float]) -> RubricScore:
    """Aggregate per-item judge scores as upstream does, and with 0.5 kept beside it.

    >>> rubric_scores("knowledge_update", [1.0, 0.5])
    RubricScore(upstream=0.5, kept=0.75, items=2)
    >>> rubric_scores("event_ordering", [1.0, 0.5]).upstream
    0.75
    """
    if not item_scores:
        raise ValueError("a BEAM question has at least one rubric item")
    kept = sum(item_scores) / len(item_scores)
    if ability == EVENT_ORDERING:
        return RubricScore(kept, kept, len(item_scores))
    cast = sum(int(s) for s in item_scores) / len(item_scores)
    return RubricScore(cast, kept, len(item_scores))


def reply_items(reply: str) -> list[str]:
    """The reply's events as upstream lists them: one per line, blank lines included."""
    return reply.split("\n")


def align(
    reference: Sequence[str], system: Sequence[str], same: Callable[[str, str], bool]
) -> list[str]:
    """Each system item replaced by the first unused reference item `same` matches, else kept."""
    used: set[int] = set()
    out = []
    for item in system:
        match = next((i for i, r in enumerate(reference) if i not in used and same(r, item)), None)
        if match is None:
            out.append(item)
        else:
            used.add(match)
            out.append(reference[match])
    return out


def event_order_score(reference: Sequence[str], aligned: Sequence[str]) -> EventOrderScore:
    """Upstream's precision, recall, F1, Kendall τ-b and final score (module docstring)."""
    from scipy.stats import kendalltau

    ref, sys = list(reference), list(aligned)
    tp = len(set(ref) & set(sys))
    fp = sum(1 for x in sys if x not in ref)
    fn = sum(1 for x in ref if x not in sys)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    union = list(dict.fromkeys(ref + sys))
    x, y = _ranks(ref, union), _ranks(sys, union)
    constant = len(set(x)) < 2 or len(set(y)) < 2  # τ_b's denominator is 0: scipy's NaN
    tau = math.nan if constant else float(kendalltau(x, y, variant="b").statistic)
    if math.isnan(tau):
        return EventOrderScore(precision, recall, f1, None, None)
    return EventOrderScore(precision, recall, f1, tau, (tau + 1) / 2 * f1)


def _ranks(seq: list[str], union: list[str]) -> list[int]:
    """1-based place of each union item in `seq` (its last occurrence), len(union)+1 if absent."""
    place = {item: i + 1 for i, item in enumerate(seq)}
    return [place.get(u, len(union) + 1) for u in union]


def judge_question(question: Question, reply: str, judge: BeamJudge) -> dict[str, Any]:
    """Every LLM-judged BEAM score of one reply: rubric item by item, event order if asked."""
    ability = question.question_type or ""
    scores = [judge.score_item(item, reply) for item in question.rubric]
    rubric = rubric_scores(ability, scores)
    out: dict[str, Any] = {"rubric": rubric.upstream, "rubric_kept": rubric.kept}
    if ability == EVENT_ORDERING:
        aligned = align(question.rubric, reply_items(reply), judge.same_event)
        out.update(_event_fields(event_order_score(question.rubric, aligned), ""))
    return out


def offline_scores(question: Question, reply: str, context: str) -> dict[str, Any]:
    """Offline BEAM figures (labelled `_offline`): rubric reachability, event order.

    `rubric_reach_offline` = share of rubric items whose every content term (after
    upstream's "LLM response should …:" lead-in) is in the context. The event order is
    upstream's arithmetic with a word-overlap aligner in place of the LLM (a reply line
    matches a reference item holding every content term of it). Empty for non-BEAM.
    The context's terms are gathered line by line (`context_terms`): memoising the whole
    context kept every question's context alive in `content_terms`' memo.
    """
    if not question.rubric:
        return {}
    have = context_terms(context)
    wanted = [set(content_terms(_RUBRIC_PREFIX.sub("", r))) for r in question.rubric]
    reach = sum(1 for w in wanted if w and w <= have) / len(wanted)
    out: dict[str, Any] = {"rubric_reach_offline": round(reach, 4)}
    if question.question_type == EVENT_ORDERING:
        aligned = align(question.rubric, reply_items(reply), _terms_match)
        out.update(_event_fields(event_order_score(question.rubric, aligned), "_offline"))
    return out


def _terms_match(reference: str, line: str) -> bool:
    """Offline alignment: the line holds every content term of the reference item."""
    ref = set(content_terms(reference))
    return bool(ref) and ref <= set(content_terms(line))


def _event_fields(score: EventOrderScore, suffix: str) -> dict[str, Any]:
    """The event-ordering figures as record score keys (`event_order_*<suffix>`)."""
    rounded = {
        "f1": round(score.f1, 4),
        "tau_b": None if score.tau_b is None else round(score.tau_b, 4),
        "score": None if score.final is None else round(score.final, 4),
    }
    return {f"event_order_{k}{suffix}": v for k, v in rounded.items()}
