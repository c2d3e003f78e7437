"""Helpers for end-to-end tests: run `python -m bench.run` as a user would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

# the overrides of the shared smoke runs of tests/conftest.py (fixtures smoke_run,
# smoke_raw_rag_run, smoke_raw_run); a test that makes one of these runs itself uses the fixture
SMOKE_ALL = ("dataset=smoke", "progress=false")
"""Every default arm (raw, rag, neuromorphic, tuned) on the smoke fixture."""
SMOKE_RAW_RAG = ("dataset=smoke", "arms=[raw,rag]", "progress=false")
"""Two arms, one with a store: a couple of seconds."""
SMOKE_RAW = ("dataset=smoke", "arms=[raw]", "progress=false")
"""The cheapest run there is."""


def run_cli(
    *overrides: str,
    module: str = "bench.run",
    env: dict[str, str] | None = None,
    timeout: float = 600,
) -> subprocess.CompletedProcess[str]:
    """Run a bench CLI from the project root; return the completed process."""
    full_env = {**os.environ, "HYDRA_FULL_ERROR": "0", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", module, *overrides],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=full_env,
        timeout=timeout,
    )


def load_records(run_dir: Path) -> dict[str, dict[str, Any]]:
    """Every record of a run keyed by question id."""
    out = {}
    for path in sorted((run_dir / "questions").glob("*.json")):
        record = json.loads(path.read_text())
        out[record["question_id"]] = record
    return out


def strip_timings(record: dict[str, Any]) -> dict[str, Any]:
    """A record without the fields that legitimately differ between runs."""
    clone = json.loads(json.dumps(record))
    for result in clone["arms"].values():
        for key in ("latency_ms", "retrieve_ms"):
            result.pop(key, None)
    clone.pop("provenance", None)
    return clone


def last_line(text: str) -> str:
    """The last non-empty line of a process's output."""
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def two_conversation_slice() -> tuple[str, ...]:
    """The scale tests' data: LoCoMo's first two conversations when `$BENCH_DATA_DIR` holds
    `locomo10.json` (CI's case), else the two-conversation smoke fixture (offline, no data)."""
    data = os.environ.get("BENCH_DATA_DIR")
    if data and (Path(data) / "locomo10.json").is_file():
        return ("dataset=locomo", "limit.conversations=2")
    return ("dataset=smoke",)
