"""SIGKILL an offline smoke run at moments chosen from its log, resume, compare (issue 8).

Each case starts a fresh run, kills it (SIGKILL: no cleanup of any kind) when a log
marker appears or when the n-th record lands, then resumes with the same command;
every record must equal the uninterrupted run's field for field (timings, provenance
and run name aside), and no temp file may be left behind.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.support.e2e_support import ROOT, SMOKE_ALL, load_records, run_cli, strip_timings

ARGS = SMOKE_ALL  # the shared smoke_run of tests/conftest.py is the reference
MOMENTS = [
    "dataset smoke:",  # loaded; before run.json and any store
    "ingest raw/smoke-1",  # rag ingestion of the first conversation under way
    "ingest rag/smoke-1",  # neuromorphic ingestion under way
    "ingest neuromorphic/smoke-1",  # tuned ingestion under way
    "ingest tuned/smoke-1",  # answering the first conversation
    "records>=1",
    "records>=5",
    "records>=10",  # around the end of conversation 1 (run.json rewrite follows)
    "ingest raw/smoke-2",
    "ingest rag/smoke-2",
    "ingest neuromorphic/smoke-2",
    "records>=14",
]


@pytest.fixture(scope="module")
def reference(smoke_run: Path) -> dict[str, dict]:
    """The uninterrupted run's records (ARGS)."""
    return load_records(smoke_run)


def _kill_at(moment: str, out: Path) -> bool:
    """Start a run and SIGKILL it at `moment`; True when the kill happened before exit."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "bench.run", *ARGS, f"out={out}"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "HYDRA_FULL_ERROR": "0"},
    )
    seen: list[str] = []
    reader = threading.Thread(target=lambda: seen.extend(iter(proc.stdout.readline, "")))
    reader.start()
    want = int(moment.split(">=")[1]) if moment.startswith("records>=") else None
    deadline = time.monotonic() + 120
    killed = False
    while proc.poll() is None and time.monotonic() < deadline:
        if want is not None:
            hit = len(list((out / "questions").glob("*.json"))) >= want
        else:
            hit = any(moment in line for line in list(seen))
        if hit:
            proc.kill()
            killed = True
            break
        time.sleep(0.002)
    proc.wait()
    reader.join()
    return killed


@pytest.mark.slow  # 12 kill+resume pairs: ~90 s of CPU, several minutes on a busy machine
@pytest.mark.parametrize("moment", MOMENTS)
def test_a_killed_run_resumes_to_the_uninterrupted_result(
    moment: str, tmp_path: Path, reference: dict[str, dict]
) -> None:
    out = tmp_path / "run"
    assert _kill_at(moment, out), f"the run ended before {moment!r}"
    proc = run_cli(*ARGS, f"out={out}")
    assert proc.returncode == 0, proc.stderr[-2000:]
    resumed = load_records(out)
    assert resumed.keys() == reference.keys()
    for qid, record in reference.items():
        assert strip_timings(resumed[qid]) == strip_timings(record), qid
    assert not list(out.rglob(".*.tmp"))
