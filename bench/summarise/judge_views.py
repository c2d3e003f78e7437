"""The summary's sections about its judges' scale: LongMemEval metrics, calibration, migration.

One hook for `summarise_records`: each view decides from the run whether it applies
(LongMemEval metrics: records with a question type; calibration: a run with an LLM
judge or a `calibration.json`; migration: answers judged by two or more judges) and
returns Markdown lines, empty when it does not. Standard library only.
"""

from __future__ import annotations

from pathlib import Path

from bench.records import QuestionRecord
from bench.runmeta import RunMeta


def judge_sections(
    run_dir: Path,
    records: list[QuestionRecord],
    arms: list[str],
    meta: RunMeta | None,
    outcome: str,
    locomo_style: bool,
) -> list[str]:
    """Every applicable judge-scale section, as Markdown lines."""
    out: list[str] = []
    if any(r.question_type is not None for r in records):
        from bench.summarise.longmemeval_metrics import longmemeval_metrics, render_longmemeval

        out += render_longmemeval(longmemeval_metrics(records, arms), outcome)
    from bench.summarise.calibration_view import calibration_section

    out += calibration_section(run_dir, meta, outcome, locomo_style)
    from bench.summarise.migration import migration_rows, render_migration

    out += render_migration(migration_rows(records, locomo_style), locomo_style)
    return out
