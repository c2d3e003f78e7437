"""A unit's own peak resident memory, in a worker process that runs unit after unit.

A `workers=N` child or a Ray worker process runs many units, and its peak resident set
(VmHWM, `bench.rss.peak_rss_mb`) is the largest of them so far. Before each unit the
worker writes `5` to `/proc/self/clear_refs` (Linux 4.0+), which sets VmHWM back to
the current resident set; the peak read after the unit is then that unit's: its working
set plus what the process already held (interpreter, imports, models loaded before).
Where the reset is refused (no /proc, other systems) the figure is the process's peak
so far, an upper bound on the unit's; `UnitResult.peak_rss_mb` says which
(`peak_is_unit`). The run log has one line per unit; docs/cluster.md.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace

from bench.rss import peak_rss_mb, reset_peak
from bench.run.outcome import UnitResult

log = logging.getLogger("bench.run")
BOUND_MB = 2048
"""The memory bound of a whole run, and so of every unit (issue 39: at most 2 GB at every
size from 128K to 10M tokens, model footprint included)."""


def measured(run: Callable[[], UnitResult]) -> UnitResult:
    """Run one unit in a worker and return its result with its own peak resident MiB."""
    own = reset_peak()
    result = run()
    return replace(result, peak_rss_mb=peak_rss_mb(), peak_is_unit=own)


def log_peaks(results: list[UnitResult]) -> None:
    """One run-log line per measured unit; a warning for a unit over `BOUND_MB`."""
    for result in results:
        if result.peak_rss_mb is None:
            continue
        what = "its own" if result.peak_is_unit else "its worker's so far"
        over = result.peak_rss_mb > BOUND_MB
        log.log(
            logging.WARNING if over else logging.INFO,
            "unit %s: peak resident memory %.0f MiB (%s)%s, %.0f s",
            result.unit_id,
            result.peak_rss_mb,
            what,
            f", over the {BOUND_MB} MiB bound" if over else "",
            result.seconds,
        )
