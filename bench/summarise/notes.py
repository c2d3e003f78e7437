"""The notes a summary ends with (and the per-arm cap notes it starts with)."""

from __future__ import annotations

from collections.abc import Mapping

from bench.providers.roles import proxy_notes
from bench.scoring.retrieval_health import summary_notes as retrieval_notes
from bench.scoring.rules import Outcome
from bench.summarise.cautions import offline_caution
from bench.summarise.flags import extraction_notes
from bench.summarise.model import Summary
from bench.summarise.scales import mixed, scale_banner
from bench.summarise.scan import RunScan
from bench.summarise.verdict import OFFLINE_ANSWERER


def closing_notes(summary: Summary) -> list[str]:
    """The notes under every summary: offline caution, run warnings, extraction.

    Too few questions is a reason of the verdict (`too-few-questions`), not a note.
    """
    notes = []
    scales = summary.flags.scales
    if mixed(scales):
        offline = bool(summary.meta and summary.meta.offline)
        banner = scale_banner(scales, offline, summary.outcome, summary.f1_threshold)
        notes.append(f"{banner}; each arm's label names its scale")
    if summary.meta and summary.meta.offline:
        notes.append(_offline_note(summary))
    notes.extend(count_notes(summary))
    if summary.meta and summary.meta.sample:
        notes.append(sample_note(summary.meta.sample))
    for warning in summary.meta.warnings if summary.meta else []:
        notes.append(f"run warning: {warning}")
    notes.extend(extraction_notes(summary.meta))
    notes.extend(retrieval_notes(summary.meta.retrieval_health if summary.meta else None))
    notes.extend(proxy_notes(summary.meta.accounting if summary.meta else None))
    return notes


def sample_note(sample: Mapping[str, object]) -> str:
    """`SAMPLE: 100 of 1986 questions, 20 per category (seed 0) ...` for a sampled run."""
    size = sample.get("per_category")
    how = (
        f"{size} per category" if size is not None else f"{sample.get('fraction')} of each category"
    )
    return (
        f"SAMPLE: {sample.get('questions')} of {sample.get('of')} questions, {how} "
        f"(seed {sample.get('seed')}, stratified by category; "
        f"ids sha256 {str(sample.get('ids_sha256'))[:12]}); "
        "figures are for this sample, not the whole dataset"
    )


def cap_notes(scan: RunScan) -> list[str]:
    """Per arm: capped answers, contexts cut to fit, unparseable verdicts (when any)."""
    counts = {a: (x.answered, x.capped, x.cut, x.unparseable) for a, x in scan.arms.items()}
    notes = []
    for arm in sorted(counts):
        answered, capped, cut, unparseable = counts[arm]
        if capped:
            notes.append(f"truncated answers {arm}: {capped} of {answered} hit the completion cap")
        if cut:
            notes.append(f"contexts cut to fit the server {arm}: {cut} of {answered}")
        if unparseable:
            notes.append(f"unparseable verdicts {arm}: {unparseable} (not counted as wrong)")
    return notes


def _offline_note(summary: Summary) -> str:
    """Which arms the offline answerer answered, on which rule.

    "not LLM-judged" only when no LLM judged any of them (an imported arm beside them was
    judged elsewhere, and says so on its own label).
    """
    caution = offline_caution(summary.meta, summary.dataset, summary.locomo_style)
    arms = [a for a in summary.arms if OFFLINE_ANSWERER in summary.verdict.arm_codes(a)]
    rules = sorted({summary.flags.scales.get(a, summary.outcome) for a in arms})
    parsed = [Outcome.parse(rule) for rule in rules]
    f1_only = bool(parsed) and all(r is not None and r.f1_threshold is not None for r in parsed)
    how = "; these numbers are not LLM-judged" if f1_only else ""
    who = f" (arms {', '.join(arms)})" if len(arms) < len(summary.arms) else ""
    return (
        f"OFFLINE run{who}: answers from the extractive offline answerer, scored with "
        f"{', '.join(rules) or summary.outcome}{how}. {caution}"
    )


def count_notes(summary: Summary) -> list[str]:
    """Per set, when some arm has no result for some questions (a published arm: 1-4 only).

    Its accuracy then counts other questions than the others', so the column is not one
    pool of questions; the paired tables compare arms on the questions both answered.
    """
    notes = []
    for name in ("scored", "all") if not summary.sets_identical else ("scored",):
        stats = summary.arms.values()
        if not any(s.excluded[name].get("missing") for s in stats):
            continue
        listed = ", ".join(f"{s.name} {s.accuracy[name].n}" for s in stats)
        notes.append(
            f"acc {name} counts different questions per arm ({listed}): compare arms "
            "on the paired tables, which use only the questions both answered"
        )
    return notes
