"""SIGINT and SIGTERM stop a run within seconds and print the end line.

A real `python -m bench.run` against the fault server on 127.0.0.1, whose every answer
takes 20 s (a slow model): once the first answer request has arrived, the signal is
sent. The run must be gone within a few seconds (not after the 20 s request, nor its
retries), say what is on disk and how to resume, and exit 128 + the signal number;
the same command then finishes the run.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.e2e_support import ROOT, run_cli
from tests.support.fault_server import Fault, FaultServer

ENV = {"OPENAI_API_KEY": "sk-fake-interrupt-7a1c"}
SLOW_S = 20.0
BOUND_S = 10.0  # GRACE_S (5 s) plus interpreter exit, with room for a loaded machine


def _overrides(base_url: str, out: Path) -> list[str]:
    return [
        "dataset=smoke",
        f"out={out}",
        "progress=false",
        "provider=openai",
        "arms=[raw]",
        f"provider.answerer.base_url={base_url}",
        "provider.embedder.kind=wordllama",
        "provider.embedder.model=wordllama/l2_supercat_256",
        "provider.embedder.dim=256",
    ]


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_ends_the_run_within_seconds_with_the_end_line(
    signum: int, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    with FaultServer() as server:
        server.always(Fault.slow(SLOW_S))
        argv = _overrides(server.base_url, out)
        env = {**os.environ, **ENV, "HYDRA_FULL_ERROR": "0"}
        proc = subprocess.Popen(
            [sys.executable, "-m", "bench.run", *argv],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            deadline = time.monotonic() + 120
            while not any(r.path.endswith("/chat/completions") for r in server.requests):
                assert proc.poll() is None, proc.communicate()[1][-2000:]
                assert time.monotonic() < deadline, "no answer request reached the server"
                time.sleep(0.1)
            sent = time.monotonic()
            proc.send_signal(signum)
            _, err = proc.communicate(timeout=60)
            took = time.monotonic() - sent
        finally:
            if proc.poll() is None:
                proc.kill()
        if signum == signal.SIGINT:  # the printed command resumes the run to its end
            server.always(None)
            resumed = run_cli(*argv, env=ENV)
            assert resumed.returncode == 0, resumed.stderr[-2000:]
            assert len(list((out / "questions").glob("*.json"))) == 16
    print(f"stopped {took:.1f}s after the signal: {err.strip().splitlines()[-1]}")
    assert took < BOUND_S, f"took {took:.1f}s to stop"
    assert proc.returncode == 128 + signum, err[-2000:]
    name = signal.Signals(signum).name
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"interrupted by {name}: run {out}: ")
    assert "resume with: python -m bench.run dataset=smoke" in last
    assert "Traceback" not in err
    assert ENV["OPENAI_API_KEY"] not in err
