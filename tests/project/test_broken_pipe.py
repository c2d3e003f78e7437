"""A reader that closes the pipe early (`| head`) ends a command quietly: exit 141, no traceback."""

from __future__ import annotations

import subprocess
import sys

import pytest

from bench.cli_errors import PIPE_CLOSED
from tests.support.e2e_support import ROOT

RUN = ROOT / "results" / "smoke-offline-v0.3.0"


@pytest.mark.parametrize(
    "command",
    [
        ["bench.summarise", str(RUN), "--json"],
        ["bench.perf", "--help"],
    ],
)
def test_a_closed_pipe_is_not_a_traceback(command: list[str]) -> None:
    """The reader is gone before the command writes: its write fails with EPIPE."""
    proc = subprocess.Popen(
        [sys.executable, "-m", *command],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # long before the interpreter has started and printed anything
    stderr = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == PIPE_CLOSED, stderr
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr, stderr
