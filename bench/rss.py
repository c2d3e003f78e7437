"""This process's peak resident memory, its own and not its parent's.

Linux keeps `getrusage(RUSAGE_SELF).ru_maxrss` across `execve`: a child started by a
process holding 1.1 GB (`bench.perf scale` with a 10M-token tier loaded) reports at
least 1.1 GB before it has done anything. `VmHWM` in /proc/self/status is the peak of
the current address space, which `execve` replaces, so it is the process's own; where
there is no /proc, `ru_maxrss` is the fallback (KiB on Linux, bytes on macOS).
"""

from __future__ import annotations

import resource
import sys
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
