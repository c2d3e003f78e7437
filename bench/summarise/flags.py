"""Flags of a run: degraded arms and untrustworthy judges, computed once, shown everywhere.

Standard library only. `compute_flags` reads run.json (extraction health, the judges'
and the answerer's endpoints) and the records (verdicts beside F1) and returns one
`RunFlags`; the summary tables, the paired tables, SUMMARY.md's first lines, the report's
charts, the comparable export and the explorer all render it through the helpers here,
so each shows the same marks:

- arm `extraction degraded` (bench.scoring.health: failed exchanges, no facts, duplicate or
  ungrounded facts);
- judge `self-judging`, `degenerate` and `missing verdicts` (rules in
  bench.summarise.judge_checks);
- judge `lenient (calibration)`: the hook for a calibration set's acceptance rate of
  wrong answers — `compute_flags(..., lenient={judge_id: reason})`, from the run's
  `calibration.json` (`calibration_view.lenient_judges`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from bench.records import QuestionRecord
from bench.runmeta import RunMeta
from bench.scoring.health import (
    arm_total,
    degraded_warnings,
    mode_note,
    quality_note,
    table_from_json,
)
from bench.scoring.retrieval_health import table_from_json as retrieval_table
from bench.summarise.judge_checks import (
    agreements,
    degenerate_reason,
    missing_reason,
    self_judging,
)
from bench.summarise.scales import mixed

EXTRACTION_DEGRADED = "extraction degraded"
RETRIEVAL_DEGRADED = "retrieval degraded"
SELF_JUDGING = "self-judging"
DEGENERATE = "degenerate"
MISSING_VERDICTS = "missing verdicts"
"""Answers the judge left without a verdict (`error`, `unparseable`); the run exited 1."""
LENIENT = "lenient (calibration)"
"""Set by a calibration set (acceptance rate of known-wrong answers); see `compute_flags`."""


@dataclass(frozen=True)
class Flag:
    """One reason not to trust a number: what is flagged, and the figures behind it."""

    kind: str
    """`EXTRACTION_DEGRADED`, `SELF_JUDGING`, `DEGENERATE` or `LENIENT`."""
    detail: str
    """The figures, one line (`0 of 12 exchanges failed, 0 facts stored`)."""


@dataclass(frozen=True)
class RunFlags:
    """Every flag of one run, by arm and by judge."""

    arms: Mapping[str, tuple[Flag, ...]] = field(default_factory=dict)
    """Arm name -> its flags (only flagged arms)."""
    judges: Mapping[str, tuple[Flag, ...]] = field(default_factory=dict)
    """Judge id -> its flags (only flagged judges)."""
    primary_judge: str | None = None
    """The judge whose verdict is the outcome, when one is."""
    scales: Mapping[str, str] = field(default_factory=dict)
    """Arm -> its scale (bench.summarise.scales.arm_scale); labels name it when they differ."""

    def __bool__(self) -> bool:
        """True when anything is flagged."""
        return bool(self.arms or self.judges)

    @property
    def primary(self) -> tuple[Flag, ...]:
        """The primary judge's flags (they apply to every accuracy of the run)."""
        return self.judges.get(self.primary_judge or "", ())

    @property
    def primary_degenerate(self) -> bool:
        """True when the outcome comes from a degenerate judge."""
        return any(f.kind == DEGENERATE for f in self.primary)

    def arm_label(self, arm: str) -> str:
        """`arm`, or `arm [DEGRADED: ...]`; with arms on several scales, `arm [f1>=0.5]`."""
        kinds = ", ".join(f.kind for f in self.arms.get(arm, ()))
        name = f"{arm} [{self.scales.get(arm, 'unknown')}]" if mixed(self.scales) else arm
        return f"{name} [DEGRADED: {kinds}]" if kinds else name

    def judge_mark(self) -> str:
        """`` or ` [judge llm: degenerate, self-judging]` for a flagged primary judge."""
        kinds = ", ".join(f.kind for f in self.primary)
        return f" [judge {self.primary_judge}: {kinds}]" if kinds else ""

    def mark_first(self, header: list[str]) -> list[str]:
        """A table header whose first cell carries `judge_mark()`."""
        return [header[0] + self.judge_mark(), *header[1:]]

    def pair_name(self, a: str, b: str) -> str:
        """`A vs B` with each arm's label."""
        return f"{self.arm_label(a)} vs {self.arm_label(b)}"

    def banner_html(self) -> str:
        """The headline as an HTML banner list (report, explorer); `` when nothing is flagged."""
        if not self:
            return ""
        import html  # pages only: the text summary needs no escaping

        items = "".join(f"<li>{html.escape(line)}</li>" for line in self.headline())
        return f'<div class="banner"><ul class="flags">{items}</ul></div>'

    def title_mark(self) -> str:
        """` — DEGENERATE JUDGE` for a title when the primary judge is degenerate, else ``."""
        return " — DEGENERATE JUDGE" if self.primary_degenerate else ""

    def pair_cells(self, a: str, b: str, baseline: bool) -> list[str]:
        """The arm cells of a paired row: `[A, B]`, or one cell against a baseline run."""
        if not baseline:
            return [self.arm_label(a), self.arm_label(b)]
        return [self.arm_label(a) if a == b else f"{self.arm_label(b)} vs {self.arm_label(a)}"]

    def headline(self) -> list[str]:
        """The lines a summary opens with: the primary judge first, then arms, other judges."""
        lines = []
        if self.primary_degenerate:
            lines.append(
                f"DEGENERATE JUDGE: the primary judge {self.primary_judge} "
                "accepts answers that share almost nothing with the gold; its accuracies are "
                "not a measurement"
            )
        for judge_id in sorted(self.judges, key=lambda j: (j != self.primary_judge, j)):
            role = "primary judge" if judge_id == self.primary_judge else "judge"
            for flag in self.judges[judge_id]:
                lines.append(f"FLAGGED {role} {judge_id}: {flag.kind} — {flag.detail}")
        for arm in sorted(self.arms):
            for flag in self.arms[arm]:
                lines.append(f"DEGRADED arm {arm}: {flag.kind} — {flag.detail}")
        return lines

    def to_json(self) -> dict[str, Any]:
        """`{"primary_judge", "arms": {arm: [{kind, detail}]}, "judges": {...}}`."""

        def plain(table: Mapping[str, tuple[Flag, ...]]) -> dict[str, list[dict[str, str]]]:
            return {k: [{"kind": f.kind, "detail": f.detail} for f in v] for k, v in table.items()}

        return {
            "primary_judge": self.primary_judge,
            "primary_degenerate": self.primary_degenerate,
            "arms": plain(self.arms),
            "judges": plain(self.judges),
        }


def _arm_flags(meta: RunMeta) -> dict[str, tuple[Flag, ...]]:
    """Arms with a degraded conversation (extraction) or unit (retrieval), with the numbers."""
    out: dict[str, tuple[Flag, ...]] = {}
    for arm, per_conv in table_from_json(meta.extraction_health).items():
        bad = sum(h.degraded for h in per_conv.values())
        if bad:
            t = arm_total(per_conv)
            detail = (
                f"{bad} of {len(per_conv)} conversations; {t.failed} of {t.exchanges} "
                f"exchanges failed, {t.facts} facts stored{quality_note(t)}"
            )
            out[arm] = (Flag(EXTRACTION_DEGRADED, detail),)
    for arm, per_unit in retrieval_table(meta.retrieval_health).items():
        bad_units = [h for h in per_unit.values() if h.degraded]
        if bad_units:
            detail = f"{len(bad_units)} of {len(per_unit)} units; {bad_units[0].problems()[0]}"
            out[arm] = (*out.get(arm, ()), Flag(RETRIEVAL_DEGRADED, detail))
    return out


def _primary_judge(meta: RunMeta) -> str | None:
    """`scoring.primary_judge` of the run's config, else the `judge:<id>` outcome's id."""
    scoring = meta.config.get("scoring")
    if isinstance(scoring, Mapping) and scoring.get("primary_judge"):
        return str(scoring["primary_judge"])
    if meta.outcome and meta.outcome.startswith("judge:"):
        return meta.outcome.split(":", 1)[1]
    return None


def compute_flags(
    meta: RunMeta | None,
    records: Iterable[QuestionRecord],
    *,
    lenient: Mapping[str, str] | None = None,
    scales: Mapping[str, str] | None = None,
) -> RunFlags:
    """The run's flags from run.json and its records.

    `lenient`: judge id -> a one-line reason (e.g. "accepts 41% of known-wrong answers")
    for judges a calibration set found lenient (`calibration_view.lenient_judges`);
    `scales`: arm -> its scale (`bench.summarise.scales.arm_scales`).
    """
    meta = meta or RunMeta()
    judges: dict[str, list[Flag]] = {}
    for judge_id, per_arm in agreements(records).items():
        if missing := missing_reason(per_arm):
            judges.setdefault(judge_id, []).append(Flag(MISSING_VERDICTS, missing))
        reason = degenerate_reason(per_arm)
        if reason:
            judges.setdefault(judge_id, []).append(Flag(DEGENERATE, reason))
    for judge_id, reason in self_judging(meta.config).items():
        judges.setdefault(judge_id, []).append(Flag(SELF_JUDGING, reason))
    for judge_id, reason in (lenient or {}).items():
        judges.setdefault(judge_id, []).append(Flag(LENIENT, reason))
    return RunFlags(
        arms=_arm_flags(meta),
        judges={k: tuple(v) for k, v in sorted(judges.items())},
        primary_judge=_primary_judge(meta),
        scales=dict(scales or {}),
    )


def extraction_notes(meta: RunMeta | None) -> list[str]:
    """Per extracting arm: exchanges, failed, facts (and suspect facts); DEGRADED lines."""
    table = table_from_json(meta.extraction_health if meta else None)
    notes = []
    for arm in sorted(table):
        total = arm_total(table[arm])
        mark = "DEGRADED " if total.degraded else ""
        notes.append(
            f"{mark}extraction {arm}: {total.failed} of {total.exchanges} exchanges failed, "
            f"{total.facts} facts stored{quality_note(total)}{mode_note(total)}"
        )
    notes.extend(f"DEGRADED results: {line}" for line in degraded_warnings(table))
    return notes
