"""Hydra multirun support.

Each job writes into its own `<out>/<override dirname>` and adds one row to `<out>/sweep.md` (rows
sorted by job directory, so reruns are stable).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench.records import write_json_atomic, write_text_atomic

SWEEP_ROWS = "sweep-rows"


def _multirun_job() -> tuple[Path, Path] | None:
    """(sweep dir, job dir) inside a Hydra multirun job, else None."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    if not HydraConfig.initialized():
        return None
    hc = HydraConfig.get()
    if hc.mode != RunMode.MULTIRUN:
        return None
    return Path(hc.sweep.dir), Path(hc.runtime.output_dir)


def job_dirs(out: str, stores: str | None) -> tuple[str, str | None]:
    """(out, stores) of this job.

    In a multirun the job's own directory and, unless set, the sweep folder's shared stores; else
    both unchanged.
    """
    job = _multirun_job()
    if job is None:
        return out, stores
    return str(job[1]), stores or str(job[0])


def record_sweep_row(out: str, report: dict[str, Any]) -> None:
    """In a multirun, store this job's headline row and re-render the sweep table."""
    job = _multirun_job()
    if job is None:
        return
    sweep_dir, job_dir = job
    name = job_dir.name
    cutoffs = report["cutoffs"]
    row = {
        "job": name,
        "arms": {
            arm: {str(k): d["retrieval"]["byK"][str(k)]["recall"] for k in cutoffs}
            for arm, d in report["arms"].items()
        },
        "cutoffs": cutoffs,
    }
    write_json_atomic(sweep_dir / SWEEP_ROWS / f"{name}.json", row)
    rows = [
        json.loads(p.read_text(encoding="utf-8"))
        for p in sorted((sweep_dir / SWEEP_ROWS).glob("*.json"))
    ]
    write_text_atomic(sweep_dir / "sweep.md", sweep_table(rows))


def sweep_table(rows: list[dict[str, Any]]) -> str:
    """Markdown: one line per (job, arm) with recall at every cutoff.

    Jobs of one sweep score the same queries, so the rows compare query-for-query.
    """
    cutoffs = rows[0]["cutoffs"] if rows else []
    head = "| job | arm | " + " | ".join(f"recall@{k}" for k in cutoffs) + " |"
    lines = ["# Sweep", "", head, "|---|---|" + "---:|" * len(cutoffs)]
    for row in rows:
        for arm, recalls in row["arms"].items():
            cells = " | ".join(
                "n/a" if recalls[str(k)] is None else f"{recalls[str(k)]:.3f}" for k in cutoffs
            )
            lines.append(f"| {row['job']} | {arm} | {cells} |")
    return "\n".join(lines) + "\n"
