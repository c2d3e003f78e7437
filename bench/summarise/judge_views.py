"""The summary's sections about its judges' scales: BEAM, LongMemEval, calibration, migration.

One hook for `summarise_records`: each view decides from the run whether it applies
(BEAM: records with BEAM scores; LongMemEval metrics: other records of a LongMemEval
question type; calibration: a run with an LLM judge or a `calibration.json`; migration: answers
judged by two or more judges) and returns Markdown lines, empty when it does not.
Standard library only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.records import QuestionRecord
from bench.runmeta import RunMeta


def judge_sections(
    run_dir: Path,
    records: list[QuestionRecord],
    arms: list[str],
    meta: RunMeta | None,
    outcome: str,
    locomo_style: bool,
) -> tuple[list[str], dict[str, Any]]:
    """Every applicable judge-scale section: Markdown lines and the same data for --json.

    JSON keys (present only when the section applies): `beam` (offline and per-judge
    figures per arm and ability, `bench.summarise.beam_view`), `longmemeval` (per arm: counts
    per type, task-averaged, overall, abstention), `calibration` (the run's judge and
    its calibration cells, or null cells), `judge_migration` (one object per row).
    """
    from bench.summarise.beam_view import beam_section
    from bench.summarise.calibration_view import calibration_cells, calibration_section
    from bench.summarise.migration import migration_rows, render_migration

    out, beam = beam_section(records, arms)
    data: dict[str, Any] = {"beam": beam} if beam else {}
    from bench.summarise.longmemeval_metrics import UPSTREAM_TYPES

    if not beam and any(r.question_type in UPSTREAM_TYPES for r in records):
        from bench.summarise.longmemeval_metrics import (
            longmemeval_json,
            longmemeval_metrics,
            render_longmemeval,
        )

        metrics = longmemeval_metrics(records, arms)
        out += render_longmemeval(metrics, outcome)
        data["longmemeval"] = longmemeval_json(metrics)
    section = calibration_section(run_dir, meta, outcome, locomo_style)
    if section:
        out += section
        data["calibration"] = calibration_cells(run_dir, meta, outcome)
    rows = migration_rows(records, locomo_style)
    if rows:
        out += render_migration(rows, locomo_style)
        data["judge_migration"] = [{**vars(r), "p": r.p} for r in rows]
    return out, data
