"""The claim boundary's types: may a number of this run be quoted beside a published one?

Standard library only. A `Verdict` is `publishable` when no `Reason` applies; each
reason is a stable code (below, documented in docs/methodology.md §"Publishable") and
one sentence, for the whole run or for named arms. An arm is publishable when no
reason of the run and none of its own applies. The reasons are computed once, from
run.json, the records and the run directory's files (`bench.summarise.claims`), and
shown by every reader from the JSON here: the first lines of SUMMARY.md, `--json`, the
comparable export, report.html, explorer.html, MANIFEST.json and `bench.board`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

OFFLINE_ANSWERER = "offline-answerer"
UNOFFICIAL_OUTCOME = "unofficial-outcome"
JUDGE_UNCALIBRATED = "judge-uncalibrated"
JUDGE_UNINFORMATIVE = "judge-uninformative"
JUDGE_STRICT = "judge-strict"
JUDGE_LENIENT = "judge-lenient"
JUDGE_DEGENERATE = "judge-degenerate"
JUDGE_SELF = "judge-self-judging"
ARM_DEGRADED = "arm-degraded"
INCOMPLETE = "incomplete-coverage"
CODE_VERSIONS = "mixed-code-versions"
DIRTY_TREE = "dirty-tree"
RERUN_BY_OUTCOME = "rerun-by-outcome"
TUNED_IN_SAMPLE = "tuned-in-sample"
NEAR_FULL_CONTEXT = "near-full-context"
TOO_FEW = "too-few-questions"
UNSUMMARISABLE = "unsummarisable"
"""MANIFEST.json's reason when the summariser could not read the run (bench.verify)."""
CODES = (
    OFFLINE_ANSWERER,
    UNOFFICIAL_OUTCOME,
    JUDGE_UNCALIBRATED,
    JUDGE_UNINFORMATIVE,
    JUDGE_STRICT,
    JUDGE_LENIENT,
    JUDGE_DEGENERATE,
    JUDGE_SELF,
    ARM_DEGRADED,
    INCOMPLETE,
    CODE_VERSIONS,
    DIRTY_TREE,
    RERUN_BY_OUTCOME,
    TUNED_IN_SAMPLE,
    NEAR_FULL_CONTEXT,
    TOO_FEW,
    UNSUMMARISABLE,
)
"""Every reason code, in the order reasons are listed."""


@dataclass(frozen=True)
class Reason:
    """One reason a number is not publishable."""

    code: str
    """A stable code from `CODES`."""
    sentence: str
    """One sentence with the figures behind it."""
    arms: tuple[str, ...] = ()
    """The arms it applies to; empty: the whole run."""

    def text(self) -> str:
        """`code (arm a, b): sentence`."""
        where = f" (arm {', '.join(self.arms)})" if self.arms else ""
        return f"{self.code}{where}: {self.sentence}"

    def to_json(self) -> dict[str, object]:
        """`{code, sentence, arms}`."""
        return {"code": self.code, "sentence": self.sentence, "arms": list(self.arms)}


@dataclass(frozen=True)
class Verdict:
    """`publishable` and every reason against it, for the run and per arm."""

    reasons: tuple[Reason, ...] = ()
    """Every reason that applies, in `CODES` order."""
    arms: tuple[str, ...] = ()
    """The run's arms."""
    scales: Mapping[str, str] = field(default_factory=dict)
    """Arm -> its scale: the outcome rule (`f1>=0.5`, `judge:<id> (model)`, ...)."""

    @property
    def publishable(self) -> bool:
        """True when no reason applies."""
        return not self.reasons

    def arm_reasons(self, arm: str) -> list[Reason]:
        """The reasons of the run and of `arm`."""
        return [r for r in self.reasons if not r.arms or arm in r.arms]

    def arm_codes(self, arm: str) -> list[str]:
        """The codes of `arm_reasons`, once each, in `CODES` order."""
        return sorted({r.code for r in self.arm_reasons(arm)}, key=CODES.index)

    def arm_publishable(self, arm: str) -> bool:
        """True when no reason applies to `arm`."""
        return not self.arm_reasons(arm)

    def lines(self) -> list[str]:
        """`publishable: false` then one `- code: sentence` line per reason."""
        head = f"publishable: {str(self.publishable).lower()}"
        if self.reasons:
            head += f" ({len(self.reasons)} reason{'s' if len(self.reasons) != 1 else ''})"
        return [head, *(f"- {r.text()}" for r in self.reasons)]

    def markdown(self) -> list[str]:
        """The lines SUMMARY.md opens with (a quote block)."""
        head, *rest = self.lines()
        return [f"> **{head}**", *(f"> {line}" for line in rest)]

    def html(self) -> str:
        """A banner for report.html and explorer.html."""
        import html  # pages only

        head, *rest = self.lines()
        css = "verdict ok" if self.publishable else "verdict banner"
        items = "".join(f"<li>{html.escape(line[2:])}</li>" for line in rest)
        body = f"<ul>{items}</ul>" if items else ""
        return f'<div class="{css}"><strong>{html.escape(head)}</strong>{body}</div>'

    def to_json(self) -> dict[str, object]:
        """`{publishable, reasons: [...], arms: {arm: {publishable, reasons: [codes], scale}}}`."""
        return {
            "publishable": self.publishable,
            "reasons": [r.to_json() for r in self.reasons],
            "arms": {
                arm: {
                    "publishable": self.arm_publishable(arm),
                    "reasons": self.arm_codes(arm),
                    "scale": self.scales.get(arm),
                }
                for arm in self.arms
            },
        }


def verdict_from_json(data: Any) -> Verdict | None:
    """A verdict read back from `to_json` output (MANIFEST.json, comparable.json), else None."""
    if not isinstance(data, dict) or not isinstance(data.get("reasons"), list):
        return None
    reasons = []
    for item in data["reasons"]:
        if isinstance(item, dict) and isinstance(item.get("code"), str):
            listed = item.get("arms")
            arms: list[Any] = listed if isinstance(listed, list) else []
            reasons.append(
                Reason(item["code"], str(item.get("sentence", "")), tuple(map(str, arms)))
            )
    given = data.get("arms")
    arms_data: dict[str, object] = given if isinstance(given, dict) else {}
    scales = {
        str(a): str(v.get("scale"))
        for a, v in arms_data.items()
        if isinstance(v, dict) and v.get("scale")
    }
    return Verdict(tuple(reasons), tuple(map(str, arms_data)), scales)
