"""This process's peak resident memory, its own and not its parent's.

Linux keeps `getrusage(RUSAGE_SELF).ru_maxrss` across `execve`: a child started by a
process holding 1.1 GB (`bench.perf scale` with a 10M-token tier loaded) reports at
least 1.1 GB before it has done anything. `VmHWM` in /proc/self/status is the peak of
the current address space, which `execve` replaces, so it is the process's own; where
there is no /proc, `ru_maxrss` is the fallback (KiB on Linux, bytes on macOS).
"""

from __future__ import annotations

import ctypes
import resource
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path


def peak_rss_mb() -> float:
    """Peak resident set of this process image so far, in MiB (one decimal)."""
    try:
        for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except (OSError, ValueError, IndexError):
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(peak / (2**20 if sys.platform == "darwin" else 1024), 1)


_CLEAR_REFS = Path("/proc/self/clear_refs")
_RESET_PEAK = "5"
"""clear_refs value that resets the peak resident set (proc(5))."""


def reset_peak() -> bool:
    """Start this process's peak resident set afresh; False when the system refuses."""
    try:
        _CLEAR_REFS.write_text(_RESET_PEAK, encoding="ascii")
    except OSError:
        return False
    return True


def release_free_heap() -> bool:
    """Hand the C heap's free pages back to the system; False where that is not possible.

    After an arm ingests a long conversation, glibc keeps the memory its allocations
    freed (Python objects, SQLite and LanceDB buffers) inside the process's heap:
    resident, though unused, until later allocations of the same process reuse it.
    `malloc_trim(0)` returns every free page of every arena (glibc 2.8+), so what the
    next arm or the answering holds is counted once. A no-op where the C library has
    no `malloc_trim` (musl, macOS).
    """
    trim = _malloc_trim()
    return bool(trim(0)) if trim is not None else False


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    """The C library's `malloc_trim` (glibc), or None.

    Looked up among the symbols the process already has (`CDLL(None)`), never through
    `ctypes.util.find_library`, which starts a subprocess (`ldconfig`).
    """
    if not sys.platform.startswith("linux"):
        return None
    try:
        found: Callable[[int], int] | None = getattr(ctypes.CDLL(None), "malloc_trim", None)
    except OSError:
        return None
    return found
