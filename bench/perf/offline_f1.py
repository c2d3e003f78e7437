"""`python -m bench.perf offline_f1 [-- overrides]`: the offline reader's official F1 per arm.

Runs the offline default (default `dataset=locomo`, every default arm) into a temporary
folder, summarises it and reports each arm's mean official LoCoMo F1 on categories 1–4
(the `scored` set) beside the target of issue 12 (0.25). A quality figure, not a timing:
it is deterministic, so one run is enough.

The reader's rules were tuned on conversations 0–4 of the data file (`dev`); the same
figure on conversations 5–9 (`held_out`) shows how far the tuning carries over.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench.paths import PROJECT_ROOT
from bench.scoring.rules import SCORED_CATEGORIES

TARGET_F1 = 0.25
"""Every arm's offline F1 on categories 1–4 should reach this (issue 12, item 6)."""
DEV_CONVERSATIONS = 5
"""Conversations 0–4 (file order) were used to tune the reader; the rest are held out."""


def offline_f1_figures(overrides: list[str]) -> dict[str, Any]:
    """Official F1 (categories 1–4) per arm of a fresh offline run, and the target."""
    chosen = overrides or ["dataset=locomo"]
    with tempfile.TemporaryDirectory() as tmp:
        out = f"{tmp}/run"
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "bench.run", *chosen, f"out={out}", "progress=false"],
            check=True,
            cwd=PROJECT_ROOT,
            capture_output=True,
        )
        run_s = time.perf_counter() - started
        split = split_f1(Path(out))
        summary = subprocess.run(
            [sys.executable, "-m", "bench.summarise", out, "--json"],
            check=True,
            cwd=PROJECT_ROOT,
            capture_output=True,
            text=True,
        )
    data = json.loads(summary.stdout)
    f1 = {name: arm["f1_scored"] for name, arm in data["arms"].items()}
    return {
        "overrides": chosen,
        "questions_scored": data["n_questions"]["scored"],
        "official_f1_scored": {k: None if v is None else round(v, 4) for k, v in f1.items()},
        "target": TARGET_F1,
        "arms_below_target": sorted(k for k, v in f1.items() if v is None or v < TARGET_F1),
        "official_f1_scored_dev": split["dev"],
        "official_f1_scored_held_out": split["held_out"],
        "split": f"dev = conversations 0-{DEV_CONVERSATIONS - 1}, held_out = the rest",
        "run_s": round(run_s, 1),
    }


def split_f1(run_dir: Path) -> dict[str, dict[str, float]]:
    """Mean official F1 (categories 1–4) per arm on dev and held-out conversations.

    Conversation order is the data file's (`run.json` names it); records are read
    directly, so the figure needs nothing beyond the run directory.
    """
    meta = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    order = conversation_order(Path(meta["dataset"]["path"]))
    sums: dict[tuple[str, str], list[float]] = defaultdict(list)
    for path in sorted((run_dir / "questions").glob("*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        if record["category"] not in SCORED_CATEGORIES:
            continue
        part = "dev" if order.get(record["conversation_id"], 0) < DEV_CONVERSATIONS else "held_out"
        for arm, result in record["arms"].items():
            if result.get("scores"):
                sums[(part, arm)].append(float(result["scores"]["f1"]))
    out: dict[str, dict[str, float]] = {"dev": {}, "held_out": {}}
    for (part, arm), values in sorted(sums.items()):
        out[part][arm] = round(sum(values) / len(values), 4)
    return out


def conversation_order(data_file: Path) -> dict[str, int]:
    """Index of each conversation id in a LoCoMo-format file (`sample_id`, file order).

    Other formats have no such order: every conversation then counts as dev.
    """
    samples = json.loads(data_file.read_text(encoding="utf-8"))
    if not isinstance(samples, list):
        return {}
    ids = [s.get("sample_id") if isinstance(s, dict) else None for s in samples]
    return {str(sid): i for i, sid in enumerate(ids) if sid is not None}
