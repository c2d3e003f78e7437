"""Pairing arms on the same questions: sets and groups of a run, exact McNemar, Holm.

Questions are record positions; an arm's outcomes are the sets it got right and wrong
(results that count only). A paired test counts the four cells over the questions both
arms answered; Holm adjusts every distinct test of one table as a family.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from bench.records import QuestionRecord
from bench.scoring.rules import SCORED_CATEGORIES
from bench.summarise.clustered import (
    CLUSTER_KEY,
    REPLICATES,
    ClusteredTest,
    ClusterTally,
    clustered_test,
    clusters_of,
)
from bench.summarise.load import LoadedRun
from bench.summarise.model import SETS, PairedTest, PairRow
from bench.summarise.stats import holm, mcnemar_exact_p, min_detectable_effect


def group_key(record: QuestionRecord, locomo_style: bool) -> str:
    """The question's group: its LoCoMo category, or its type (LongMemEval, BEAM, ...)."""
    return (
        record.question_type if not locomo_style and record.question_type else str(record.category)
    )


Questions = frozenset[int]
"""Questions as positions in the run's records (ids are unique, so pairing is on id)."""
Outcomes = tuple[Questions, Questions]
"""The questions an arm got right, and those it got wrong (results that count only)."""


def moved(
    positions: list[int], records: list[QuestionRecord], position: dict[str, int]
) -> Questions:
    """Record positions of one run as positions in another run's records.

    `positions` index `records`; `position` maps the other run's question ids to its
    record positions. Questions the other run lacks are dropped.
    """
    ids = (records[i].question_id for i in positions)
    return frozenset(position[q] for q in ids if q in position)


def paired(
    a: Outcomes,
    b: Outcomes,
    questions: Questions,
    clusters: Sequence[int] | None = None,
    interval: bool = False,
) -> PairedTest:
    """Pair two arms' outcomes over `questions` (both must count): exact McNemar.

    Each cell counts the questions in both sets, e.g. a right and b wrong = |A⁺ ∩ B⁻|.
    With `clusters` (record position -> cluster index) the clustered test rides along
    (`clustered_of`); `interval` adds its bootstrap interval (pooled rows only: cost).
    """
    (a_right, a_wrong), (b_right, b_wrong) = a, b
    a_right, a_wrong = a_right & questions, a_wrong & questions
    both, a_only = len(a_right & b_right), len(a_right & b_wrong)
    b_only, neither = len(a_wrong & b_right), len(a_wrong & b_wrong)
    n = a_only + b_only + both + neither
    mde = min_detectable_effect(a_only + b_only, n)
    test = PairedTest(n, a_only, b_only, both, neither, mcnemar_exact_p(a_only, b_only), mde)
    if clusters is not None:
        both_sides = (a_right | a_wrong) & (b_right | b_wrong)
        a_side, b_side = a_right & both_sides, b_right & both_sides
        test.clustered = clustered_of(clusters, both_sides, a_side, b_side, interval)
    return test


def clustered_of(
    clusters: Sequence[int],
    questions: Questions,
    a_right: Questions,
    b_right: Questions,
    interval: bool,
) -> ClusteredTest:
    """The clustered test of paired `questions`: per cluster, n and each side's right answers."""
    where = clusters.__getitem__
    n, a, b = (Counter(map(where, q)) for q in (questions, a_right, b_right))
    tallies = [ClusterTally(n[c], a[c], b[c]) for c in sorted(n)]
    discordant = len(a_right ^ b_right)
    return clustered_test(tallies, discordant, replicates=REPLICATES if interval else None)


def pair_rows(
    a_name: str,
    b_name: str,
    a: Outcomes,
    b: Outcomes,
    layout: Layout,
) -> list[PairRow]:
    """One row per set; group tests are shared between sets so Holm counts each once."""
    cl = layout.clusters
    groups = {g: paired(a, b, qs, cl) for g, qs in layout.group_questions.items()}
    pooled_all = paired(a, b, layout.set_questions["all"], cl, interval=True)
    rows = []
    for name in SETS:
        pooled = pooled_all if name == "all" or not layout.locomo_style else None
        pooled = pooled or paired(a, b, layout.set_questions[name], cl, interval=True)
        shown = {g: groups[g] for g in layout.set_groups[name]}
        rows.append(PairRow(a_name, b_name, name, pooled, shown))
    return rows


def apply_holm(rows: list[PairRow]) -> None:
    """Holm-adjust every distinct test in `rows` as one family (pooled and per group).

    The clustered p-values of the same tests form a second family, adjusted alike.
    """
    tests: dict[int, PairedTest] = {}
    for row in rows:
        for test in (row.pooled, *row.groups.values()):
            tests[id(test)] = test
    family = list(tests.values())
    for test, adjusted in zip(family, holm([t.p for t in family]), strict=True):
        test.p_holm = adjusted
    clustered = [t.clustered for t in family if t.clustered is not None]
    for c, adjusted in zip(clustered, holm([c.p for c in clustered]), strict=True):
        c.p_holm = adjusted


@dataclass(frozen=True)
class Layout:
    """Which questions (record positions) each set and group holds, groups in display order."""

    locomo_style: bool
    """LoCoMo categories apply (sets `scored` = 1-4 and `all`)."""
    set_questions: dict[str, Questions]
    """Set name -> its questions."""
    group_questions: dict[str, Questions]
    """Group key -> its questions."""
    set_groups: dict[str, list[str]]
    """Set name -> its group keys, in display order."""
    group_of: dict[str, str]
    """Question id -> its group key."""
    clusters: tuple[int, ...] = ()
    """Record position -> its cluster's index in `cluster_names` (`cluster_key`)."""
    cluster_names: tuple[str, ...] = ()
    """The clusters, sorted: the units that own a store (bench/summarise/clustered.py)."""
    cluster_key: str = CLUSTER_KEY
    """What a cluster is, read from the records: `conversation_id`, or its host."""

    def qids(self, name: str) -> frozenset[str]:
        """The question ids of set `name`."""
        keys = set(self.set_groups[name])
        return frozenset(q for q, key in self.group_of.items() if key in keys)


def layout_of(run: LoadedRun, locomo_style: bool) -> Layout:
    """Groups partition the questions, so a set's questions are the union of its groups'."""
    positions: dict[str, list[int]] = {}
    scored_groups: set[str] = set()
    group_of: dict[str, str] = {}
    for i, r in enumerate(run.records):
        key = group_key(r, locomo_style)
        group_of[r.question_id] = key
        positions.setdefault(key, []).append(i)
        if not locomo_style or r.category in SCORED_CATEGORIES:
            scored_groups.add(key)
    order = sorted(positions, key=lambda k: (not k.isdigit(), int(k) if k.isdigit() else 0, k))
    set_groups = {"all": order, "scored": [k for k in order if k in scored_groups]}
    groups = {k: frozenset(positions[k]) for k in order}
    sets = {
        name: frozenset().union(*(groups[k] for k in keys)) for name, keys in set_groups.items()
    }
    names, index, key = clusters_of(run.records)
    return Layout(locomo_style, sets, groups, set_groups, group_of, index, names, key)


AUDIT_CLEAN = "scored, key unchanged by the audit"
"""The errata view of a pairing with an imported arm: the scored questions whose gold
the answer-key audit leaves standing. An imported arm cannot be judged again against
the corrected key, so both sides are compared only where the official key is sound."""


def audit_clean(run: LoadedRun, layout: Layout) -> Questions | None:
    """The scored questions the audit does not change; None without the audit."""
    from bench.summarise.errata import is_score_affected

    if not layout.locomo_style or not any(r.errata_type is not None for r in run.records):
        return None
    affected = {i for i, r in enumerate(run.records) if is_score_affected(r)}
    return layout.set_questions["scored"] - affected
