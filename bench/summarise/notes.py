"""The notes a summary ends with (and the per-arm cap notes it starts with)."""

from __future__ import annotations

from bench.providers.roles import proxy_notes
from bench.scoring.retrieval_health import summary_notes as retrieval_notes
from bench.summarise.cautions import offline_caution
from bench.summarise.flags import extraction_notes
from bench.summarise.model import Summary
from bench.summarise.scan import RunScan


def closing_notes(summary: Summary) -> list[str]:
    """The notes under every summary: offline caution, run warnings, extraction.

    Too few questions is a reason of the verdict (`too-few-questions`), not a note.
    """
    notes = []
    if summary.meta and summary.meta.offline:
        caution = offline_caution(summary.meta, summary.dataset, summary.locomo_style)
        notes.append(
            f"OFFLINE run: answers from the extractive offline answerer, scored with "
            f"{summary.outcome}; these numbers are not LLM-judged. {caution}"
        )
    for warning in summary.meta.warnings if summary.meta else []:
        notes.append(f"run warning: {warning}")
    notes.extend(extraction_notes(summary.meta))
    notes.extend(retrieval_notes(summary.meta.retrieval_health if summary.meta else None))
    notes.extend(proxy_notes(summary.meta.accounting if summary.meta else None))
    return notes


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
