"""Run-to-run variation of a `repeats=N` run, standard library only.

Each arm's result is repeat 0; `ArmResult.repeats` holds repeats 1 .. N-1 (bench/run/
repeats.py). Only questions of the scored set whose outcome is known in all R repeats
count (R = the run's `repeats`, or the largest repeat seen when run.json does not say).

- accuracy of repeat r = share correct; the arm's **mean** and run-to-run **SD** (sample
  standard deviation, n − 1) are taken over the R per-repeat accuracies;
- **flip rate** = share of questions whose outcome is not the same in every repeat;
- **judge self-agreement**: per LLM judge, κ over its R verdicts on the questions whose R
  answers are identical (so the judge, not the answer, is what varies): Cohen's κ for
  R = 2 (`stats.cohen_kappa`), Fleiss' κ for R ≥ 3 (`stats.fleiss_kappa`);
- **paired effect vs noise**: for arms A and B on their common questions,
  d_r = acc_A(r) − acc_B(r); the effect exceeds run-to-run noise when
  |mean d| > 2·SD(d) (SD over the R repeats; with SD = 0, when mean d ≠ 0).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from bench.records import OK, ArmResult, QuestionRecord
from bench.runmeta import RunMeta
from bench.summarise.stats import cohen_kappa, fleiss_kappa

NOISE_SDS = 2.0
"""An arm pair's mean per-repeat difference must exceed this many SDs of it."""


@dataclass
class JudgeAgreement:
    """One judge's agreement with itself across repeats on one arm's answers."""

    judge_id: str
    """The judge."""
    kappa: float | None
    """Cohen's (2 repeats) or Fleiss' (3+) κ; None when undefined (one verdict throughout)."""
    items: int
    """Questions whose answers were identical in every repeat and all verdicts parsed."""
    method: str
    """`cohen` or `fleiss`."""


@dataclass
class ArmRepeats:
    """One arm across its repeats."""

    arm: str
    """Arm name."""
    n: int
    """Questions with a known outcome in every repeat."""
    accuracies: list[float]
    """Accuracy of repeat 0, 1, ..."""
    mean: float | None
    """Mean of `accuracies`."""
    sd: float | None
    """Sample SD of `accuracies` (None with fewer than 2 repeats)."""
    flipped: int
    """Questions whose outcome differs between repeats."""
    flip_rate: float | None
    """`flipped / n`."""
    judges: list[JudgeAgreement] = field(default_factory=list)
    """Judge self-agreement per judge."""


@dataclass
class PairNoise:
    """Whether an arm pair's paired effect exceeds its run-to-run noise."""

    a: str
    """First arm."""
    b: str
    """Second arm."""
    n: int
    """Questions both arms have in every repeat."""
    mean_diff: float | None
    """Mean over repeats of acc(a) − acc(b)."""
    sd_diff: float | None
    """Sample SD over repeats of that difference."""
    exceeds: bool | None
    """|mean_diff| > NOISE_SDS · sd_diff; None without questions or repeats."""


@dataclass
class RepeatsView:
    """The repeats section of a summary."""

    requested: int
    """The run's `repeats` (or the largest repeat count seen)."""
    skipped: str | None
    """`deterministic: repeats skipped (...)` when the run drew no repeat."""
    arms: list[ArmRepeats] = field(default_factory=list)
    """Per arm."""
    pairs: list[PairNoise] = field(default_factory=list)
    """Per arm pair, in arm order."""


def repeats_view(
    records: list[QuestionRecord],
    names: list[str],
    meta: RunMeta | None,
    qids: frozenset[str],
    seen: int | None = None,
) -> RepeatsView | None:
    """The view for a run with repeats (None for a single run).

    `seen`: the most draws of any result (1 + its repeats), when the caller counted them.
    """
    if seen is None:
        seen = max((len(res.repeats) + 1 for r in records for res in r.arms.values()), default=1)
    requested = meta.repeats.requested if meta and meta.repeats.requested > 1 else seen
    if requested <= 1:
        return None
    skipped = meta.repeats.skipped if meta else None
    if skipped:
        return RepeatsView(requested, skipped)
    table = {name: _outcomes(records, name, requested, qids) for name in names}
    view = RepeatsView(requested, None)
    for name in names:
        view.arms.append(_arm(name, table[name], records, requested, qids))
    for a, b in combinations(names, 2):
        view.pairs.append(_pair(a, b, table[a], table[b], requested))
    return view


def _draws(result: ArmResult, count: int) -> list[Any] | None:
    """Repeat 0 .. count-1 of a result (the result itself, then its repeats), or None."""
    if result.status != OK:
        return None
    by_index = {r.repeat: r for r in result.repeats if r.status == OK}
    draws: list[Any] = [result]
    for index in range(1, count):
        if index not in by_index:
            return None
        draws.append(by_index[index])
    return draws


def _outcomes(
    records: list[QuestionRecord], arm: str, count: int, qids: frozenset[str]
) -> dict[str, list[bool]]:
    out: dict[str, list[bool]] = {}
    for record in records:
        result = record.arms.get(arm)
        draws = _draws(result, count) if result and record.question_id in qids else None
        if draws and all(d.correct is not None for d in draws):
            out[record.question_id] = [bool(d.correct) for d in draws]
    return out


def _accuracies(outcomes: dict[str, list[bool]], count: int, keep: set[str]) -> list[float]:
    n = len(keep)
    return [sum(outcomes[q][r] for q in keep) / n for r in range(count)] if n else []


def _sd(values: list[float]) -> float | None:
    import statistics  # only runs with repeats need it (start-up, issue 15)

    return statistics.stdev(values) if len(values) >= 2 else None


def _arm(
    name: str,
    outcomes: dict[str, list[bool]],
    records: list[QuestionRecord],
    count: int,
    qids: frozenset[str],
) -> ArmRepeats:
    accs = _accuracies(outcomes, count, set(outcomes))
    flipped = sum(len(set(o)) > 1 for o in outcomes.values())
    n = len(outcomes)
    return ArmRepeats(
        arm=name,
        n=n,
        accuracies=accs,
        mean=_fmean(accs) if accs else None,
        sd=_sd(accs),
        flipped=flipped,
        flip_rate=flipped / n if n else None,
        judges=_judge_agreement(records, name, count, qids),
    )


def _judge_agreement(
    records: list[QuestionRecord], arm: str, count: int, qids: frozenset[str]
) -> list[JudgeAgreement]:
    """κ per judge over questions whose answers were the same in every repeat."""
    ratings: dict[str, list[list[bool]]] = {}
    for record in records:
        result = record.arms.get(arm)
        draws = _draws(result, count) if result and record.question_id in qids else None
        if not draws or len({d.answer for d in draws}) != 1:
            continue
        for judge_id in result.judgements if result else {}:
            verdicts = [d.judgements.get(judge_id) for d in draws]
            if all(v is not None and v.status == OK for v in verdicts):
                ratings.setdefault(judge_id, []).append([bool(v.verdict) for v in verdicts])
    out = []
    for judge_id in sorted(ratings):
        items = ratings[judge_id]
        if count == 2:
            kappa, n = cohen_kappa((a, b) for a, b in items)
            out.append(JudgeAgreement(judge_id, kappa, n, "cohen"))
        else:
            kappa, n = fleiss_kappa(items)
            out.append(JudgeAgreement(judge_id, kappa, n, "fleiss"))
    return out


def _pair(
    a: str, b: str, oa: dict[str, list[bool]], ob: dict[str, list[bool]], count: int
) -> PairNoise:
    common = set(oa) & set(ob)
    diffs = [
        x - y
        for x, y in zip(_accuracies(oa, count, common), _accuracies(ob, count, common), strict=True)
    ]
    if not diffs:
        return PairNoise(a, b, 0, None, None, None)
    mean_diff, sd = _fmean(diffs), _sd(diffs)
    exceeds = None if sd is None else abs(mean_diff) > NOISE_SDS * sd
    return PairNoise(a, b, len(common), mean_diff, sd, exceeds)


def render_repeats(view: RepeatsView | None) -> list[str]:
    """Markdown lines of the repeats section (none for a single run)."""
    if view is None:
        return []
    head = f"## Repeats ({view.requested} draws per question and arm)"
    if view.skipped:
        return ["", head, "", view.skipped]
    rows = ["| arm | n | per repeat | mean | SD | flip rate | judge κ (items) |"]
    rows.append("|---|---:|---|---:|---:|---:|---|")
    for arm in view.arms:
        per = ", ".join(f"{a:.1%}" for a in arm.accuracies) or "—"
        kappas = "; ".join(
            f"{j.judge_id} {j.method} {_num(j.kappa, 3)} ({j.items})" for j in arm.judges
        )
        rows.append(
            f"| {arm.arm} | {arm.n} | {per} | {_pct(arm.mean)} | {_pct(arm.sd)} | "
            f"{_pct(arm.flip_rate)} ({arm.flipped}) | {kappas or '—'} |"
        )
    out = ["", head, "", *rows]
    if view.pairs:
        out += ["", f"Paired effect vs run-to-run noise (exceeds: |mean d| > {NOISE_SDS:g}·SD(d)):"]
        out += ["", "| A vs B | n | mean d | SD(d) | exceeds noise |", "|---|---:|---:|---:|---|"]
        for p in view.pairs:
            verdict = "—" if p.exceeds is None else ("yes" if p.exceeds else "no")
            out.append(
                f"| {p.a} vs {p.b} | {p.n} | {_pct(p.mean_diff)} | {_pct(p.sd_diff)} | {verdict} |"
            )
    return out


def repeats_json(view: RepeatsView) -> dict[str, Any]:
    """The `repeats` key of `bench.summarise --json`."""
    from dataclasses import asdict

    return asdict(view)


def _fmean(values: list[float]) -> float:
    import statistics  # only runs with repeats need it (start-up, issue 15)

    return statistics.fmean(values)


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f}%"


def _num(value: float | None, digits: int) -> str:
    return "undefined" if value is None else f"{value:.{digits}f}"
