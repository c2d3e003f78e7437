"""Peak memory of a scale point is its own (`bench/rss.py`), not the parent's.

Linux keeps ru_maxrss across execve, so a child of a process holding 200 MB reported
at least 200 MB (every `bench.perf scale` point inherited the parent's loaded tier).
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from bench.paths import PROJECT_ROOT

PARENT = """
import resource, subprocess, sys
held = bytearray(200 * 2**20)
held[:: 4096] = b"x" * len(held[:: 4096])  # touch every page: 200 MB resident
child = "from bench.rss import peak_rss_mb; import resource; " \\
        "print(peak_rss_mb(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)"
print(subprocess.run([sys.executable, "-c", child], capture_output=True, text=True).stdout)
"""


@pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the inherited ru_maxrss is Linux's"
)
def test_a_child_of_a_large_process_reports_its_own_peak() -> None:
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", PARENT], capture_output=True, text=True, env=env, check=True
    ).stdout.split()
    own, inherited = float(out[0]), float(out[1])
    assert inherited >= 200  # what ru_maxrss said
    assert own < 100, own  # a bare interpreter importing bench.rss
