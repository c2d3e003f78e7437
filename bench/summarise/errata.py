"""The errata view of a run: every arm under the official and the audited answer key.

Standard library only. Records carry `errata_type` (the audit lists the question),
`corrected_gold`/`corrected_evidence`, and per arm `correct_corrected` plus
`scores["f1_corrected"]` on score-affected questions (`errata_type` other than
`WRONG_CITATION`). Under the corrected key an answer's outcome is `correct_corrected`
on those questions and its official `correct` elsewhere; its F1 likewise.

    ceiling(group) = (n - affected) / n

is the share of a group's questions whose official gold the audit leaves standing: an
answerer that always gives the audited answer is marked wrong on the affected ones
(up to partial-F1 overlap), so official accuracy above it rewards matching errors.

Evidence recall of an answer = |retrieved ids ∩ evidence| / |evidence|, averaged over
questions with evidence, under the official and under the corrected evidence.
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.records import OK, ArmResult, QuestionRecord, not_an_outcome
from bench.scoring.rules import SCORED_CATEGORIES
from bench.summarise.reach import evidence_recall
from bench.summarise.stats import Rate, mean

CITATION_ONLY = "WRONG_CITATION"


@dataclass(frozen=True)
class KeyView:
    """One arm on one set of questions under one answer key."""

    accuracy: Rate
    """Correct / judged under this key."""
    f1: float | None
    """Mean token F1 against this key's gold; None when no result has one."""
    evidence_recall: float | None
    """Mean share of this key's evidence ids retrieved; None if unknown."""


@dataclass(frozen=True)
class ErrataArm:
    """One arm, official key vs corrected key, on categories 1–4 and per category."""

    name: str
    """The arm's name."""
    official: KeyView
    """The arm on the scored categories under the official key."""
    corrected: KeyView
    """The arm on the scored categories under the corrected key."""
    groups_official: dict[str, Rate]
    """Per category: accuracy under the official key."""
    groups_corrected: dict[str, Rate]
    """Per category: accuracy under the corrected key."""


@dataclass(frozen=True)
class ErrataView:
    """How the audit changes the run's key and every arm's scores."""

    listed: int
    """Audited questions in the run (score-affected + citation-only)."""
    score_affected: dict[str, int]
    """Per category: questions whose gold the audit changes."""
    citation_only: dict[str, int]
    """Per category: questions whose evidence only is changed."""
    group_sizes: dict[str, int]
    """Per category: questions in the run."""
    ceiling: dict[str, float | None]
    """Per category and `scored`: (n - affected) / n under the official key."""
    arms: dict[str, ErrataArm]
    """Per arm name: its official vs corrected scores."""

    @property
    def affected_total(self) -> int:
        """Score-affected questions over every category."""
        return sum(self.score_affected.values())


def is_score_affected(record: QuestionRecord) -> bool:
    """The audit changes this question's gold answer (not only its evidence)."""
    return record.errata_type is not None and record.errata_type != CITATION_ONLY


def corrected_outcome(record: QuestionRecord, result: ArmResult) -> bool | None:
    """The outcome under the corrected key: official unless the gold changed."""
    return result.correct_corrected if is_score_affected(record) else result.correct


class _KeyTally:
    """Running counts of one arm under one key: outcomes per category, F1s, recalls."""

    __slots__ = ("cells", "f1s", "recalls")

    def __init__(self) -> None:
        self.cells: dict[str, list[int]] = {}  # category -> [correct, with an outcome]
        self.f1s: list[float] = []
        self.recalls: list[float] = []

    def add(self, group: str, outcome: bool | None, f1: object, recall: float | None) -> None:
        if outcome is not None:
            cell = self.cells.get(group)
            if cell is None:
                cell = self.cells[group] = [0, 0]
            cell[0] += bool(outcome)
            cell[1] += 1
        if isinstance(f1, (int, float)):
            self.f1s.append(float(f1))
        if recall is not None:
            self.recalls.append(recall)

    def rates(self, listed: _KeyTally, groups: list[str]) -> dict[str, Rate]:
        """Per category of `groups`: this tally's outcomes and `listed`'s together."""
        none = [0, 0]
        out = {}
        for g in groups:
            (k, n), (more_k, more_n) = self.cells.get(g, none), listed.cells.get(g, none)
            out[g] = Rate(k + more_k, n + more_n)
        return out

    def view(self, listed: _KeyTally, reported: bool, rates: dict[str, Rate]) -> KeyView:
        """The view of this tally together with `listed` (disjoint questions, one key).

        `rates`: `rates(listed, groups)` over every category counted; the accuracy is
        their sum. `reported`: the arm lists source ids (else its evidence recall is
        unknown). Means are `math.fsum` over the joined lists: the order does not matter.
        """
        recalls = self.recalls + listed.recalls if reported else []
        accuracy = Rate(sum(r.k for r in rates.values()), sum(r.n for r in rates.values()))
        return KeyView(accuracy, mean(self.f1s + listed.f1s), mean(recalls))


class AuditedQuestion:
    """What the errata tally reads of one question of categories 1–4.

    Worked out once per record rather than once per arm's result.
    """

    __slots__ = ("affected", "corrected_evidence", "f1_key", "group", "listed")

    affected: bool
    """The audit changes the gold: the corrected outcome and F1 are the result's own."""
    f1_key: str
    """The score key of the F1 under the corrected key."""
    listed: bool
    """The audit lists the question: its corrected evidence replaces the official one."""
    corrected_evidence: list[str] | None
    """The audit's evidence ids (read only when `listed`)."""
    group: str
    """The category key of the per-category cells."""

    def __init__(self, r: QuestionRecord) -> None:
        self.affected = is_score_affected(r)
        self.f1_key = "f1_corrected" if self.affected else "f1"
        self.listed = r.errata_type is not None
        self.corrected_evidence = r.corrected_evidence
        self.group = str(r.category)


class ErrataTally:
    """One arm's running counts under both keys on categories 1–4 (`ok` results).

    On a question the audit does not list, both keys give the same outcome, F1 and
    evidence recall, so it is counted once (`unlisted`); a listed question is counted
    under each key (`official`, `corrected`), and each key's view joins the two.
    """

    __slots__ = ("corrected", "official", "reported", "unlisted")

    def __init__(self) -> None:
        self.unlisted = _KeyTally()
        self.official = _KeyTally()
        self.corrected = _KeyTally()
        self.reported = False

    def add(self, q: AuditedQuestion, res: ArmResult, recall: float | None) -> None:
        """Count one `ok` result on a question of categories 1–4.

        `recall`: `evidence_recall` of the result on the official evidence, computed
        once by the caller (reachability counts the same figure).
        """
        retrieved = res.retrieved_ids
        if retrieved:
            self.reported = True
        scores = res.scores
        if not q.listed:
            self.unlisted.add(q.group, res.correct, scores.get("f1"), recall)
            return
        self.official.add(q.group, res.correct, scores.get("f1"), recall)
        now = res.correct_corrected if q.affected else res.correct
        if now is not None and now.__class__ is not bool:
            raise not_an_outcome("correct_corrected", now)
        recall = evidence_recall(retrieved, q.corrected_evidence)
        self.corrected.add(q.group, now, scores.get(q.f1_key), recall)

    def arm(self, name: str, groups: list[str]) -> ErrataArm:
        """The arm's official vs corrected view, per category of `groups` (all counted)."""
        official = self.unlisted.rates(self.official, groups)
        corrected = self.unlisted.rates(self.corrected, groups)
        return ErrataArm(
            name=name,
            official=self.unlisted.view(self.official, self.reported, official),
            corrected=self.unlisted.view(self.corrected, self.reported, corrected),
            groups_official=official,
            groups_corrected=corrected,
        )


def _tally(name: str, records: list[QuestionRecord]) -> ErrataTally:
    """The arm's tally from the records (when no one pass counted it)."""
    tally = ErrataTally()
    for r in records:
        if r.category in SCORED_CATEGORIES:
            res = r.arms.get(name)
            if res is not None and res.status == OK:
                tally.add(AuditedQuestion(r), res, evidence_recall(res.retrieved_ids, r.evidence))
    return tally


def errata_view(
    records: list[QuestionRecord],
    arm_names: list[str],
    tallies: dict[str, ErrataTally] | None = None,
) -> ErrataView | None:
    """The errata view of a LoCoMo run; None when no record carries the audit.

    `tallies`: arm -> its counts when the caller's one pass made them (`scan.py`).
    """
    if not any(r.errata_type is not None for r in records):
        return None
    sizes: dict[str, int] = {}
    affected: dict[str, int] = {}
    citation: dict[str, int] = {}
    for r in records:
        if r.category in SCORED_CATEGORIES:
            g = str(r.category)
            sizes[g] = sizes.get(g, 0) + 1
            affected[g] = affected.get(g, 0) + is_score_affected(r)
            citation[g] = citation.get(g, 0) + (r.errata_type == CITATION_ONLY)
    groups = sorted(sizes, key=int)
    sizes = {g: sizes[g] for g in groups}
    affected = {g: affected[g] for g in groups}
    citation = {g: citation[g] for g in groups}
    ceiling: dict[str, float | None] = {
        g: (sizes[g] - affected[g]) / sizes[g] if sizes[g] else None for g in groups
    }
    n_scored = sum(sizes.values())
    ceiling["scored"] = (n_scored - sum(affected.values())) / n_scored if n_scored else None
    return ErrataView(
        listed=sum(r.errata_type is not None for r in records),
        score_affected=affected,
        citation_only=citation,
        group_sizes=sizes,
        ceiling=ceiling,
        arms={n: (tallies[n] if tallies else _tally(n, records)).arm(n, groups) for n in arm_names},
    )


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def render_errata(view: ErrataView, labels: dict[str, str]) -> list[str]:
    """Markdown lines: affected counts and ceiling, then both keys side by side per arm."""
    out = [
        "",
        "## Answer-key errata (official key is the headline)",
        "",
        f"The audit lists {view.listed} questions of this run: {view.affected_total} with a "
        f"changed gold (score-affected), {sum(view.citation_only.values())} with changed "
        f"evidence only. Ceiling under the official key (categories 1–4): "
        f"{_pct(view.ceiling['scored'])}.",
        "",
        "| category | n | score-affected | citation-only | ceiling (official key) |",
        "|---|---|---|---|---|",
    ]
    for g, n in view.group_sizes.items():
        out.append(
            f"| {g} {labels.get(g, '')} | {n} | {view.score_affected[g]} | "
            f"{view.citation_only[g]} | {_pct(view.ceiling[g])} |"
        )
    out += [
        "",
        "| arm | acc official | acc corrected | F1 official | F1 corrected "
        "| evidence recall official | evidence recall corrected |",
        "|---|---|---|---|---|---|---|",
    ]
    for a in view.arms.values():
        o, c = a.official, a.corrected
        out.append(
            f"| {a.name} | {_pct(o.accuracy.value)} (n={o.accuracy.n}) | "
            f"{_pct(c.accuracy.value)} (n={c.accuracy.n}) | {_num(o.f1)} | {_num(c.f1)} | "
            f"{_pct(o.evidence_recall)} | {_pct(c.evidence_recall)} |"
        )
    header = " | ".join(f"{g} official / corrected" for g in view.group_sizes)
    out += ["", f"| arm | {header} |", "|---|" + "---|" * len(view.group_sizes)]
    for a in view.arms.values():
        cells = [
            f"{_pct(a.groups_official[g].value)} / {_pct(a.groups_corrected[g].value)}"
            for g in view.group_sizes
        ]
        out.append(f"| {a.name} | " + " | ".join(cells) + " |")
    return out


def _key_json(view: KeyView) -> dict[str, object]:
    return {
        "accuracy": view.accuracy.value,
        "k": view.accuracy.k,
        "n": view.accuracy.n,
        "f1": view.f1,
        "evidence_recall": view.evidence_recall,
    }


def errata_json(view: ErrataView) -> dict[str, object]:
    """The `errata` key of `bench.summarise --json`."""
    return {
        "listed": view.listed,
        "score_affected": view.affected_total,
        "score_affected_by_category": dict(view.score_affected),
        "citation_only_by_category": dict(view.citation_only),
        "ceiling_official": dict(view.ceiling),
        "arms": {
            a.name: {
                "official": _key_json(a.official),
                "corrected": _key_json(a.corrected),
                "categories": {
                    g: {
                        "official": a.groups_official[g].value,
                        "corrected": a.groups_corrected[g].value,
                    }
                    for g in view.group_sizes
                },
            }
            for a in view.arms.values()
        },
    }


__all__ = [
    "ErrataArm",
    "ErrataView",
    "KeyView",
    "corrected_outcome",
    "errata_json",
    "errata_view",
    "render_errata",
]
