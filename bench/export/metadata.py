"""What an export says about the run as a whole: its provenance and its verdict.

One function, `run_metadata`, so every export format (today: inspect logs) carries the
same facts, and a new verdict (a future `publishable` one) is added here once.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench.summarise.flags import Flag, RunFlags
from bench.summarise.model import Summary


def flag_rows(flags: tuple[Flag, ...]) -> list[dict[str, str]]:
    """Flags as plain rows `{"kind", "detail"}` (JSON-able)."""
    return [{"kind": f.kind, "detail": f.detail} for f in flags]


def verdict(flags: RunFlags) -> dict[str, Any]:
    """The run's verdict as far as it is known today: its flags, by arm and by judge.

    `flagged` is true when any arm or judge is flagged (bench.summarise.flags); the
    place where a run-level judgement such as `publishable` belongs.
    """
    return {
        "flagged": bool(flags),
        "primary_judge": flags.primary_judge,
        "arms": {arm: flag_rows(f) for arm, f in sorted(flags.arms.items())},
        "judges": {judge: flag_rows(f) for judge, f in sorted(flags.judges.items())},
    }


def run_metadata(summary: Summary) -> dict[str, Any]:
    """The run's provenance (run.json) and verdict (`verdict`), JSON-able, no secrets.

    run.json is written with secrets scrubbed (bench.run.directory); only its descriptive
    parts are copied: names, hashes, models, code version, the sample drawn; no local
    path (the run folder's name only; the dataset by name and SHA-256).
    """
    meta = summary.meta
    facts: dict[str, Any] = {"run": Path(summary.run_dir).name, "dataset": summary.dataset}
    if meta is not None:
        facts.update(
            run_name=meta.run_name,
            created_at=meta.created_at,
            updated_at=meta.updated_at,
            config_hash=meta.config_hash,
            dataset_file={k: v for k, v in asdict(meta.dataset).items() if not k.endswith("path")},
            sample=meta.sample or None,
            provider=asdict(meta.provider),
            offline=meta.offline,
            prompt=dict(meta.prompt),
            judges=[asdict(j) for j in meta.judges],
            provenance=asdict(meta.provenance),
        )
    facts.update(outcome=summary.outcome, verdict=verdict(summary.flags))
    return facts
