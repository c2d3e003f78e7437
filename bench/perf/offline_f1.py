"""`python -m bench.perf offline_f1 [-- overrides]`: the offline reader's official F1 per arm.

Runs the offline default (default `dataset=locomo`, every default arm) into a temporary
folder, summarises it and reports each arm's mean official LoCoMo F1 on categories 1–4
(the `scored` set) beside the target of issue 12 (0.25). A quality figure, not a timing:
it is deterministic, so one run is enough.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from typing import Any

from bench.paths import PROJECT_ROOT

TARGET_F1 = 0.25
"""Every arm's offline F1 on categories 1–4 should reach this (issue 12, item 6)."""


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
        "run_s": round(run_s, 1),
    }
