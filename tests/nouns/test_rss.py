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


FRAGMENTED = """
import ctypes, ctypes.util
from bench.rss import release_free_heap
libc = ctypes.CDLL(ctypes.util.find_library("c"))
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
libc.memset.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]
def resident():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmRSS")) // 1024
blocks = [libc.malloc(4096) for _ in range(40_000)]  # 160 MB in the heap, not mmapped
for b in blocks:
    libc.memset(b, 1, 4096)
for b in blocks[:-1]:  # the last one pins the heap's top: free() alone returns nothing
    libc.free(b)
held = resident()
print(held, release_free_heap(), resident())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="malloc_trim is glibc's")
def test_release_free_heap_returns_freed_pages_inside_the_heap() -> None:
    """Freed blocks below a live one stay resident until `malloc_trim` hands them back."""
    out = subprocess.run(
        [sys.executable, "-c", FRAGMENTED],
        capture_output=True,
        text=True,
        check=True,
        cwd=PROJECT_ROOT,
        env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)},
    ).stdout.split()
    held, released, after = int(out[0]), out[1], int(out[2])
    assert released == "True"
    assert held - after > 100, (held, after)  # of the 160 MB freed, most goes back
