"""Each arm's scale: the outcome rule (and judge model) its numbers are on. Stdlib only.

A run's arms need not share a scale: `bench.published merge` puts a publisher's judged
arm (`majority:gpt-4o-mini`) beside offline arms scored by `f1>=0.5`. `record_facts`
reads each arm's rule from its records (the most common rule of its `ok` results);
`arm_scale` names it with the judge's model; `RunFlags` carries the scales so every
label of an arm in a run that mixes scales says which scale it is on (tables, charts,
the explorer), and `scale_banner` is the one banner a report or explorer opens with:
MIXED SCALES when arms differ, OFFLINE (and "not LLM-judged" only when no LLM judged)
when every arm is the offline answerer's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from bench.records import OK, QuestionRecord
from bench.runmeta import RunMeta
from bench.scoring.rules import Outcome

OFFLINE_F1_BANNER = "OFFLINE — extractive answerer, official F1 ≥ {threshold:g}; not LLM-judged"
"""The banner of an offline run scored by the F1 rule (no LLM judged anything)."""


@dataclass
class RecordFacts:
    """What the scales and the verdict need from the records, in one pass."""

    rules: dict[str, Counter[str]] = field(default_factory=dict)
    """Arm -> outcome rule -> `ok` results scored by it."""
    imported: set[str] = field(default_factory=set)
    """Arms holding imported (published) results."""
    commits: Counter[str] = field(default_factory=Counter)
    """Code commit -> records written by it."""
    dirty: int = 0
    """Records written from a checkout with uncommitted changes."""

    def rule(self, arm: str) -> str:
        """The arm's outcome rule (the most common; `unknown` when it has none)."""
        found = self.rules.get(arm)
        return found.most_common(1)[0][0] if found else "unknown"


def record_facts(records: Iterable[QuestionRecord]) -> RecordFacts:
    """Per-arm outcome rules, imported arms, commits and dirty flags of the records.

    Values of the wrong type (a record the harness did not write) are skipped, not trusted.
    """
    facts = RecordFacts()
    for record in records:
        prov = record.provenance if isinstance(record.provenance, dict) else {}
        commit = prov.get("git_commit")
        if isinstance(commit, str) and commit:
            facts.commits[commit] += 1
        facts.dirty += prov.get("git_dirty") is True
        for arm, res in record.arms.items():
            if res.imported is not None:
                facts.imported.add(arm)
            if res.status == OK and isinstance(res.outcome, str) and res.outcome:
                facts.rules.setdefault(arm, Counter())[res.outcome] += 1
    return facts


def judge_base(judge_id: str | None) -> str:
    """`mem0_locomo#2` -> `mem0_locomo` (a judge run's base id)."""
    return (judge_id or "").split("#", 1)[0]


def rule_judge(rule: str) -> str | None:
    """The judge (base id) an outcome rule reads; None for the F1 rule or an unknown one."""
    parsed = Outcome.parse(rule)
    return (parsed.judge_id or parsed.majority_of) if parsed else None


def arm_scale(rule: str, meta: RunMeta | None) -> str:
    """The arm's scale: its rule, with the judge's model when one judged (`judge:llm (m)`)."""
    base = rule_judge(rule)
    if base is None:
        return rule
    judges = meta.judges if meta else []
    models = sorted({j.model for j in judges if judge_base(j.judge_id) == base and j.model})
    shown = [m for m in models if m != base and not base.endswith(f":{m}")]
    return f"{rule} ({', '.join(shown)})" if shown else rule


def arm_scales(facts: RecordFacts, arms: Iterable[str], meta: RunMeta | None) -> dict[str, str]:
    """Arm -> its scale, for every arm named."""
    return {arm: arm_scale(facts.rule(arm), meta) for arm in arms}


def mixed(scales: Mapping[str, str]) -> bool:
    """True when the arms are on more than one scale."""
    return len(set(scales.values())) > 1


def scale_banner(
    scales: Mapping[str, str], offline: bool | None, outcome: str, threshold: float
) -> str | None:
    """The run's banner: MIXED SCALES, OFFLINE (F1 rule or judged), or None (online, one)."""
    if mixed(scales):
        arms: dict[str, list[str]] = {}
        for arm, scale in scales.items():
            arms.setdefault(scale, []).append(arm)
        parts = "; ".join(f"{', '.join(names)} on {scale}" for scale, names in arms.items())
        return f"MIXED SCALES — {parts}: numbers on different scales are not comparable"
    if not offline:
        return None
    rule = Outcome.parse(outcome)
    if rule is not None and rule.f1_threshold is not None:
        return OFFLINE_F1_BANNER.format(threshold=threshold)
    return f"OFFLINE — extractive answerer; outcome {outcome}"
