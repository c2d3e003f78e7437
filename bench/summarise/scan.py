"""One pass over a run's records: every per-arm counter the summary reads. Stdlib only.

The summariser's cost floor is reading and parsing the records (issue 15), so the
per-result work is done once, record by record and, within a record, in the record's
arm order (the order `misses` and the exclusion counts are first seen in). Per arm:

- group tallies: questions, results that count (status `ok`, `correct` not None), correct,
  official F1 of those, and exclusions (`error`, `missing`, `no_outcome`) in first-seen
  order; sets are unions of whole groups (`arm_stats` merges them);
- latency and context-token lists, and the score rates (`abstained` on answerable items,
  `abstained` and `trap_hit` on LoCoMo category 5, `stale_in_context`): true of present;
- the positions in `records` of the questions right and wrong (paired tests), capped
  answers, contexts cut to fit and unparseable verdicts (`cli` notes), retrieval/reader
  misses (`bench.scoring.miss`);
- reachability (`reach.ReachTally`) and, when the records carry the answer-key audit,
  both keys (`errata.ErrataTally`): the rules stay in those modules, the pass is here.

Run-wide: arm names in first-seen order, the outcome rules used, whether any result
carries a judge verdict (Cohen's κ is computed only then), the most draws of a result.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from bench.records import ERROR, OK, UNPARSEABLE, ArmResult, QuestionRecord, not_an_outcome
from bench.scoring.miss import MissRow, count_misses, result_miss
from bench.scoring.rules import SCORED_CATEGORIES
from bench.summarise.errata import AuditedQuestion, ErrataTally
from bench.summarise.model import LATENCY_QUANTILES, SETS, ArmStats, GroupStats
from bench.summarise.reach import ReachTally, evidence_recall
from bench.summarise.stats import Rate, mean, percentile
from bench.types import Usage


@dataclass(slots=True)
class Tally:
    """One arm on one group: questions, counted results, correct, F1s and exclusions.

    The scan's counters are dataclasses. They were hand-written `__slots__` classes "as a
    dataclass costs start-up": the four cost 3.6 ms of CPU to define (measured under load)
    against 0.6-0.7 s of CPU, ±0.1 s run to run, for `python -m bench.summarise
    results/locomo-offline-v0.3.0`: a gain the command's time does not show.
    """

    questions: int = 0
    """Questions in the group (every arm sees every question)."""
    k: int = 0
    """Correct results among those that count."""
    n: int = 0
    """Results that count (status `ok`, binary outcome)."""
    f1: list[float] = field(default_factory=list)
    """Official F1 of the results that count (those that report one)."""
    excluded: Counter[str] = field(default_factory=Counter)
    """`error`, `missing`, `no_outcome` counts, in first-seen order."""

    @classmethod
    def merged(cls, parts: list[Tally]) -> Tally:
        """One tally of several disjoint ones (F1 means use `math.fsum`: order-free)."""
        out = cls()
        for part in parts:
            out.questions += part.questions
            out.k += part.k
            out.n += part.n
            out.f1 += part.f1
            out.excluded.update(part.excluded)
        return out


@dataclass(slots=True)
class Share:
    """`k` true of `n` results that carry a score key (a `Rate` once the scan is done)."""

    k: int = 0
    """Results whose value is true."""
    n: int = 0
    """Results that carry the key (value not None)."""


@dataclass(slots=True)
class ArmScan:
    """Every counter of one arm, from the one pass."""

    groups: dict[str, Tally]
    """Group key -> tally, in display order."""
    latencies: list[float] = field(default_factory=list)
    """`latency_ms` of the `ok` results that report one."""
    retrieves: list[float] = field(default_factory=list)
    """`retrieve_ms` of the `ok` results that report one."""
    tokens: list[float] = field(default_factory=list)
    """`context_tokens` of the `ok` results that report one."""
    abstained_answerable: Share = field(default_factory=Share)
    """`scores["abstained"]` on items with an answer (not LoCoMo 5, not `_abs`)."""
    abstained_adversarial: Share = field(default_factory=Share)
    """`scores["abstained"]` on LoCoMo category 5."""
    trap_hits: Share = field(default_factory=Share)
    """`scores["trap_hit"]` on LoCoMo category 5."""
    stale: Share = field(default_factory=Share)
    """`scores["stale_in_context"]` on every `ok` result."""
    right: list[int] = field(default_factory=list)
    """Positions in `records` of the questions whose counting result is correct."""
    wrong: list[int] = field(default_factory=list)
    """Positions in `records` of the questions whose counting result is wrong."""
    costs: list[tuple[int, int | None, Usage | None, bool]] = field(default_factory=list)
    """(position, context_tokens, usage, correct) of each counting result on a scored
    question (`bench.summarise.cost`)."""
    answered: int = 0
    """`ok` results."""
    capped: int = 0
    """`ok` results whose answer hit the completion cap."""
    cut: int = 0
    """`ok` results whose context was cut to fit the server."""
    unparseable: int = 0
    """Unparseable verdicts on `ok` results."""
    reach: ReachTally = field(default_factory=ReachTally)
    """Accuracy and recalls on the questions with a gold answer (`reach.reach_rows`)."""
    errata: ErrataTally = field(default_factory=ErrataTally)
    """Both answer keys on categories 1–4, when the records carry the audit."""


@dataclass(slots=True)
class RunScan:
    """The one pass over a run: per-arm counters and run-wide facts."""

    arms: dict[str, ArmScan]
    """Arm name -> counters, every arm of `names`."""
    outcomes: set[str | None]
    """The outcome rules (`ArmResult.outcome`) of the `ok` results."""
    misses: dict[str, dict[str, dict[str, int]]]
    """Arm -> group key -> retrieval / reader misses (`bench.scoring.miss.count_misses`)."""
    judged: bool
    """True when any `ok` result carries a judge verdict."""
    draws: int
    """Most draws of any result: 1 + its repeats (1 for a single run)."""


def arm_names(records: list[QuestionRecord], declared: list[str]) -> list[str]:
    """`declared` (run.json's arms), then arms of the records in first-seen order."""
    names = list(declared)
    seen = set(names)
    for record in records:
        if not seen.issuperset(record.arms):
            for name in record.arms:
                if name not in seen:
                    seen.add(name)
                    names.append(name)
    return names


def scan_records(
    records: list[QuestionRecord],
    names: list[str],
    group_of: dict[str, str],
    groups: list[str],
    locomo_style: bool,
) -> RunScan:
    """Walk every result once (records in order, each record's arms in its order).

    `names` must hold every arm of the records; `group_of` maps question id to group key.
    Every value has its type already: the reader checks each field (`load.read_records`,
    tests/nouns/test_untrusted.py tries every field with every hostile type).
    """
    arms = {n: ArmScan({g: Tally() for g in groups}) for n in names}
    run = _RunFacts()
    audited = locomo_style and any(r.errata_type is not None for r in records)
    for position, record in enumerate(records):
        question = _Question(record, position, group_of[record.question_id], locomo_style)
        question.audit = AuditedQuestion(record) if audited and question.scored else None
        for name, res in record.arms.items():
            _scan_result(arms[name], name, res, question, run)
        for name in names:
            if name not in record.arms:
                tally = arms[name].groups[question.group]
                tally.questions += 1
                tally.excluded["missing"] += 1
    for rule in run.outcomes:  # checked once per rule, not per result (`cli._outcome` sorts)
        if rule is not None and rule.__class__ is not str:
            raise TypeError(f"outcome {rule!r} is not the name of a rule")
    return RunScan(arms, run.outcomes, count_misses(run.miss_rows), run.judged, run.draws)


class _RunFacts:
    """Run-wide facts the pass collects beside the per-arm counters."""

    __slots__ = ("draws", "judged", "miss_rows", "outcomes")

    def __init__(self) -> None:
        self.outcomes: set[str | None] = set()
        self.miss_rows: list[MissRow] = []
        self.judged = False
        self.draws = 1


class _Question:
    """What every result of one record is counted under, worked out once per record."""

    __slots__ = (
        "abstention_item",
        "adversarial",
        "audit",
        "costed",
        "evidence",
        "group",
        "position",
        "reachable",
        "scored",
    )

    def __init__(self, record: QuestionRecord, position: int, group: str, locomo: bool) -> None:
        self.position = position
        self.group = group
        self.adversarial = locomo and record.category == 5
        self.scored = record.category in SCORED_CATEGORIES
        self.costed = self.scored or not locomo
        self.reachable = bool(record.gold) and (self.scored or not locomo)
        self.evidence = record.evidence
        self.abstention_item = self.adversarial if locomo else record.question_id.endswith("_abs")
        self.audit: AuditedQuestion | None = None


def _scan_result(
    scan: ArmScan, name: str, res: ArmResult, question: _Question, run: _RunFacts
) -> None:
    """Count one arm's result on one question into its arm's counters and the run's facts."""
    tally = scan.groups[question.group]
    tally.questions += 1
    if res.repeats:
        run.draws = max(run.draws, len(res.repeats) + 1)
    if res.status != OK:
        if res.status != ERROR:
            raise TypeError(f"status is {res.status!r}, neither ok nor error")
        tally.excluded["error"] += 1
        return
    scan.answered += 1
    run.outcomes.add(res.outcome)
    _count_outcome(scan, tally, res, question)
    if res.scores:
        _count_scores(scan, res.scores, question)
    _count_answer_flags(scan, res, run)
    if question.reachable or question.audit is not None:
        recall = evidence_recall(res.retrieved_ids, question.evidence)
        if question.reachable:
            scan.reach.add(res, recall)
        if question.audit is not None:
            scan.errata.add(question.audit, res, recall)
    kind = result_miss(
        question.evidence, res.retrieved_ids, res.correct, res.evidence_retrieved, res.miss
    )
    if kind is not None:
        run.miss_rows.append((name, question.group, kind))


def _count_outcome(scan: ArmScan, tally: Tally, res: ArmResult, question: _Question) -> None:
    """The result's outcome (right, wrong or none), F1, cost row, latency and tokens."""
    correct = res.correct
    if correct is None:
        tally.excluded["no_outcome"] += 1
    else:
        if correct.__class__ is not bool:
            raise not_an_outcome("correct", correct)
        tally.n += 1
        if correct:
            tally.k += 1
            scan.right.append(question.position)
        else:
            scan.wrong.append(question.position)
        f1 = res.scores.get("f1")
        if isinstance(f1, (int, float)) and not isinstance(f1, bool):
            tally.f1.append(float(f1))
        if question.costed:
            scan.costs.append((question.position, res.context_tokens, res.usage, correct))
    if res.latency_ms is not None:
        scan.latencies.append(float(res.latency_ms))
    if res.retrieve_ms is not None:
        scan.retrieves.append(float(res.retrieve_ms))
    if res.context_tokens is not None:
        scan.tokens.append(float(res.context_tokens))


def _count_answer_flags(scan: ArmScan, res: ArmResult, run: _RunFacts) -> None:
    """Answers cut at the cap, contexts cut to fit, unparseable and usable verdicts."""
    if res.truncated is True:
        scan.capped += 1
    if res.context_cut_tokens:
        scan.cut += 1
    if res.judgements:
        verdicts = res.judgements.values()
        scan.unparseable += sum(j.status == UNPARSEABLE for j in verdicts)
        run.judged = run.judged or any(j.status == OK and j.verdict is not None for j in verdicts)


def _count_scores(scan: ArmScan, scores: dict[str, Any], question: _Question) -> None:
    """Abstention (answerable or adversarial), trap hits and stale facts in context."""
    abstained = scores.get("abstained")
    if abstained is not None:
        share = scan.abstained_adversarial if question.adversarial else None
        if not question.abstention_item:
            share = scan.abstained_answerable
        if share is not None:
            share.n += 1
            share.k += bool(abstained)
    if question.adversarial and (trap := scores.get("trap_hit")) is not None:
        scan.trap_hits.n += 1
        scan.trap_hits.k += bool(trap)
    if (stale := scores.get("stale_in_context")) is not None:
        scan.stale.n += 1
        scan.stale.k += bool(stale)


def _rate(share: Share) -> Rate | None:
    """The share as a Rate; None when no result carried the score."""
    return Rate(share.k, share.n) if share.n else None


def _latency_summary(latencies: list[float]) -> dict[str, float | None]:
    """Percentiles and mean (sorted once: `percentile` then sorts a sorted list cheaply)."""
    ordered = sorted(latencies)
    out = {f"p{q}": percentile(ordered, q) for q in LATENCY_QUANTILES}
    out["mean"] = mean(latencies)
    return out


def arm_stats(
    name: str, scan: ArmScan, set_groups: dict[str, list[str]], group_labels: dict[str, str]
) -> ArmStats:
    """Accuracy, F1, exclusions, per-group stats, latency and abstention rates of one arm.

    Groups partition the questions and each set is a union of whole groups, so set
    tallies are merged from the group tallies of the one pass (`scan.scan_records`).
    """
    groups = scan.groups
    sets = {s: Tally.merged([groups[g] for g in set_groups[s]]) for s in SETS}
    return ArmStats(
        name=name,
        accuracy={s: Rate(t.k, t.n) for s, t in sets.items()},
        f1={s: mean(t.f1) for s, t in sets.items()},
        excluded={s: dict(t.excluded) for s, t in sets.items()},
        groups={
            g: GroupStats(
                g,
                group_labels[g],
                t.questions,
                Rate(t.k, t.n),
                mean(t.f1),
                sum(t.excluded.values()),
            )
            for g, t in groups.items()
        },
        context_tokens_mean=mean(scan.tokens),
        latency_ms=_latency_summary(scan.latencies),
        retrieve_ms=_latency_summary(scan.retrieves) if scan.retrieves else {},
        abstention_answerable=_rate(scan.abstained_answerable) or Rate(0, 0),
        adversarial_abstention=_rate(scan.abstained_adversarial),
        trap_hits=_rate(scan.trap_hits),
        stale=_rate(scan.stale),
    )
