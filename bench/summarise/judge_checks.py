"""Judges whose verdicts are not a measurement: self-judging, or degenerate against F1.

Standard library only. The two rules every place that shows a number uses:

**Self-judging**: a judge whose endpoint `model` and `base_url` (trailing `/` ignored,
unset = "") equal the answerer's grades its own answers.

**Degenerate**: over the `n` answers a judge graded `ok` that have a gold answer
(abstention items — LoCoMo category 5, LongMemEval `_abs` — aside) and an official F1,

    accuracy = accepted / n          mean_f1 = Σ f1 / n
    degenerate  ⇔  n ≥ MIN_ANSWERS  and  accuracy ≥ MIN_ACCURACY  and  mean_f1 < MAX_MEAN_F1

checked over all arms pooled and over each arm alone. A *rubric* judge (BEAM's
`beam_official`: scores per rubric item, no verdict) is held to the same rule on the
answers that share no word with the gold (F1 = 0), each counting its kept rubric mean
(`scores.rubric_kept`, 0..1) as its acceptance: one that gives full marks to such
answers is not grading them (a judge answering 1 to every item gave 0.986 to both arms
of a BEAM run, echoes and abstentions included). Why: an honest judge accepts an
answer that shares almost no words with the gold only when it says the same thing in
other words (a paraphrase, a date in another format); that happens, but not for 90% of
answers whose mean token F1 is under 0.05. A judge doing that accepts what it is shown
(an echo, an empty answer): a 270M model judging itself called 64 of 64 echoed answers
correct at F1 0.000.

A third kind, *lenient* (a calibration set shows the judge accepts wrong answers at a
high rate), is computed elsewhere and passed in (`bench.summarise.flags`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from bench.records import ERROR, OK, SKIPPED, UNPARSEABLE, Judgement, QuestionRecord

MIN_ACCURACY = 0.90
"""Judge accuracy at or above which a near-zero F1 is implausible."""
MAX_MEAN_F1 = 0.05
"""Mean official F1 below which the answers share almost nothing with the gold."""
MIN_ANSWERS = 20
"""Fewest graded answers the degenerate rule is applied to (fewer say too little)."""
POOLED = "*"
"""The key of the all-arms agreement in `agreements`."""


@dataclass
class Agreement:
    """A judge's verdicts beside the answers' F1, on answers that have a gold answer."""

    n: int = 0
    """Answers graded `ok` that have an F1."""
    accepted: float = 0
    """Of those, judged correct (a rubric judge: the sum of its kept rubric means)."""
    f1_sum: float = 0.0
    """Sum of their official F1."""
    verdicts: int = 0
    """Verdicts asked of the judge on `ok` answers, gold or not (the `POOLED` row only)."""
    missing: int = 0
    """Of those, none came back (`error` or `unparseable`; the `POOLED` row only)."""

    @property
    def accuracy(self) -> float | None:
        """Accepted / n, None when n = 0."""
        return self.accepted / self.n if self.n else None

    @property
    def mean_f1(self) -> float | None:
        """Mean official F1, None when n = 0."""
        return self.f1_sum / self.n if self.n else None

    @property
    def degenerate(self) -> bool:
        """The module's rule: n ≥ MIN_ANSWERS, accuracy ≥ MIN_ACCURACY, mean F1 < MAX_MEAN_F1."""
        if self.n < MIN_ANSWERS or self.accuracy is None or self.mean_f1 is None:
            return False
        return self.accuracy >= MIN_ACCURACY and self.mean_f1 < MAX_MEAN_F1

    def describe(self) -> str:
        """`100.0% accepted at mean F1 0.000 over 64 answers`."""
        return (
            f"{100 * (self.accuracy or 0.0):.1f}% accepted at mean F1 {self.mean_f1 or 0.0:.3f} "
            f"over {self.n} answers"
        )


def _abstention_item(record: QuestionRecord) -> bool:
    """LoCoMo category 5 or a LongMemEval `_abs` question (the right answer is to abstain)."""
    if record.question_type is None:
        return record.category == 5
    return record.question_id.endswith("_abs")


def agreements(records: Iterable[QuestionRecord]) -> dict[str, dict[str, Agreement]]:
    """Judge id -> arm (and `POOLED`) -> its `Agreement` with the answers' F1."""
    table: dict[str, dict[str, Agreement]] = {}
    for record in records:
        graded = not _abstention_item(record) and record.gold is not None
        for arm, res in record.arms.items():
            if not res.judgements or res.status != OK:
                continue
            _count_missing(table, res.judgements)
            if not graded:
                continue
            f1 = res.scores.get("f1")
            if not isinstance(f1, int | float) or isinstance(f1, bool):
                continue
            for judge_id, verdict in res.judgements.items():
                accepted = _acceptance(verdict, float(f1))
                if accepted is None:
                    continue
                for key in (arm, POOLED):
                    row = table.setdefault(judge_id, {}).setdefault(key, Agreement())
                    row.n += 1
                    row.accepted += accepted
                    row.f1_sum += float(f1)
    return table


def _count_missing(table: dict[str, dict[str, Agreement]], judgements: Mapping[str, Any]) -> None:
    """Count each verdict asked, and each that did not come back, on the judge's `POOLED` row."""
    for judge_id, verdict in judgements.items():
        if verdict.status in (ERROR, UNPARSEABLE):
            row = table.setdefault(judge_id, {}).setdefault(POOLED, Agreement())
            row.missing += 1
        if verdict.status != SKIPPED:
            table.setdefault(judge_id, {}).setdefault(POOLED, Agreement()).verdicts += 1


def missing_reason(per_arm: Mapping[str, Agreement]) -> str | None:
    """`3 of 16 verdicts missing (...)` when the judge left any answer without one, else None."""
    row = per_arm.get(POOLED)
    if row is None or not row.missing:
        return None
    return (
        f"{row.missing} of {row.verdicts} verdicts missing (judge error or unparseable reply; "
        "those answers are not scored): re-run the same command to ask again (unparseable "
        "ones: with scoring.rejudge=true)"
    )


def _acceptance(verdict: Judgement, f1: float) -> float | None:
    """1/0 for a verdict; a rubric judge's kept mean on an F1 = 0 answer; else None."""
    if verdict.status != OK:
        return None
    if verdict.verdict is not None:
        return float(bool(verdict.verdict))
    kept = (verdict.scores or {}).get("rubric_kept")
    if f1 != 0 or not isinstance(kept, int | float) or isinstance(kept, bool):
        return None
    return min(max(float(kept), 0.0), 1.0)


def degenerate_reason(per_arm: Mapping[str, Agreement]) -> str | None:
    """Why a judge is degenerate (pooled first, then the first arm by name), else None."""
    for key in (POOLED, *sorted(k for k in per_arm if k != POOLED)):
        row = per_arm.get(key)
        if row is not None and row.degenerate:
            scope = "all arms" if key == POOLED else f"arm {key}"
            return f"{row.describe()} ({scope})"
    return None


def _endpoint(section: Any) -> tuple[str, str]:
    """(model, base_url without a trailing `/`) of a config endpoint mapping."""
    if not isinstance(section, Mapping):
        return "", ""
    return str(section.get("model") or ""), str(section.get("base_url") or "").rstrip("/")


def self_judging(config: Mapping[str, Any]) -> dict[str, str]:
    """Judge id -> reason, for each configured judge whose endpoint is the answerer's."""
    provider = config.get("provider")
    answerer = _endpoint(provider.get("answerer") if isinstance(provider, Mapping) else None)
    found = {}
    judges = config.get("judges")
    for judge in judges if isinstance(judges, list) else []:
        if not isinstance(judge, Mapping) or not answerer[0]:
            continue
        if _endpoint(judge.get("endpoint")) == answerer:
            where = f" at {answerer[1]}" if answerer[1] else ""
            found[str(judge.get("judge_id"))] = (
                f"grades answers of its own model {answerer[0]}{where}"
            )
    return found
