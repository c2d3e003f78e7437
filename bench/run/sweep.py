"""Hydra multirun support for `bench.run`, `bench.screen` and `bench.suite`.

Each job writes into its own `<out>/<override dirname>`, stores one row of per-question
outcomes in `<out>/sweep-rows/<job>.json` and re-renders `<out>/sweep.md`: every job
paired with the baseline job per arm on question id (exact McNemar), rendered by the
standard-library `bench.summarise.sweep` (which also re-renders it with `--baseline`).
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench.files import write_json_atomic, write_text_atomic
from bench.paths import contained, safe_name
from bench.records import OK, iter_records
from bench.untrusted import read_json_object

Outcomes = dict[str, dict[str, dict[str, bool]]]
"""metric -> arm -> question id -> outcome."""


def _multirun_job() -> tuple[Path, Path, int] | None:
    """(sweep dir, job dir, job number) inside a Hydra multirun job, else None."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    if not HydraConfig.initialized():
        return None
    hc = HydraConfig.get()
    if hc.mode != RunMode.MULTIRUN:
        return None
    num = hc.job.num if isinstance(hc.job.num, int) else 0
    return Path(hc.sweep.dir), Path(hc.runtime.output_dir), num


def job_dirs(out: str, stores: str | None) -> tuple[str, str | None]:
    """The (out, stores) of this job.

    In a multirun: the job's own directory and, unless set, the sweep folder's shared
    stores; else both unchanged.
    """
    job = _multirun_job()
    if job is None:
        return out, stores
    return str(job[1]), stores or str(job[0])


def in_multirun() -> bool:
    """True inside a Hydra multirun job (`-m`): only then is there a sweep table to feed."""
    return _multirun_job() is not None


def record_sweep_job(
    tool: str,
    outcomes: Outcomes,
    extra: dict[str, Any] | None = None,
    clusters: dict[str, str] | None = None,
) -> None:
    """In a multirun, store this job's outcomes and re-render the paired sweep table.

    `clusters`: question id -> cluster (the unit owning a store), for the clustered test.
    """
    job = _multirun_job()
    if job is None:
        return
    from bench.summarise.model import SWEEP_ROWS
    from bench.summarise.sweep import SWEEP_TABLE, SweepRow, read_rows, render

    sweep_dir, job_dir, num = job  # imported here: a plain run never needs the table
    row = SweepRow(job_dir.name, num, tool, outcomes, extra or {}, clusters or {})
    rows_dir = sweep_dir / SWEEP_ROWS
    write_json_atomic(
        contained(rows_dir / f"{safe_name(job_dir.name)}.json", rows_dir), asdict(row)
    )
    write_text_atomic(sweep_dir / SWEEP_TABLE, render(read_rows(sweep_dir)))


def run_outcomes(run_dir: Path) -> tuple[Outcomes, dict[str, str]]:
    """`correct` per arm and question of a `bench.run` job, and each question's cluster.

    Outcomes: results with one; clusters: `bench.summarise.clustered.cluster_ids`.
    """
    from bench.summarise.clustered import cluster_ids

    by_arm: dict[str, dict[str, bool]] = {}
    conversations: dict[str, str] = {}
    for record in iter_records(run_dir):
        conversations[record.question_id] = record.conversation_id
        for arm, result in record.arms.items():
            if result.status == OK and result.correct is not None:
                by_arm.setdefault(arm, {})[record.question_id] = bool(result.correct)
    clusters, _ = cluster_ids(list(conversations.values()))
    return {"correct": by_arm}, dict(zip(conversations, clusters, strict=True))


def screen_outcomes(results: dict[str, dict[str, Any]]) -> Outcomes:
    """`evidence reached` (evidence recall > 0) per arm and question of a screen."""
    by_arm = {
        arm: {
            row["question_id"]: row["evidence_recall"] > 0
            for row in res["rows"]
            if row["evidence_recall"] is not None
        }
        for arm, res in results.items()
    }
    return {"evidence reached": by_arm}


def record_sweep_row(out: str, report: dict[str, Any]) -> None:
    """A suite job's row: recall per cutoff (headline) and `hit@K` per query and arm.

    Hits come from the job's `comparable/<arm>.json` (`relevant_ranks`, 1-based).
    """
    if _multirun_job() is None:
        return
    cutoffs = report["cutoffs"]
    recall = {
        arm: {str(k): d["retrieval"]["byK"][str(k)]["recall"] for k in cutoffs}
        for arm, d in report["arms"].items()
    }
    outcomes: Outcomes = {f"hit@{k}": {} for k in cutoffs}
    for arm in report["arms"]:
        path = contained(Path(out) / "comparable" / f"{safe_name(arm)}.json", Path(out))
        card = read_json_object(path, fix="re-run the suite")
        for ev in card["evaluations"]:
            ranks = [r for r in ev["relevant_ranks"].values() if r is not None]
            if not ev["relevant_ranks"]:
                continue  # an abstention query: no relevant memory to hit
            for k in cutoffs:
                outcomes[f"hit@{k}"].setdefault(arm, {})[ev["query_id"]] = any(
                    r <= k for r in ranks
                )
    record_sweep_job("suite", outcomes, {"recall": recall, "cutoffs": cutoffs})
