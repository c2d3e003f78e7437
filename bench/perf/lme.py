"""`python -m bench.perf lme`: an offline LongMemEval run's wall time, CPU and peak memory.

`python -m bench.run dataset=longmemeval` (default arms, offline models, one worker)
over the 16-question subset `$BENCH_DATA_DIR/longmemeval-s-subset16.json`, in a child
process measured with `os.wait4`: wall seconds, CPU seconds (user + system) and peak
resident memory (`ru_maxrss`, MiB). Settings among the overrides: `lme.path=<file>` (a
LongMemEval-format file), `lme.baseline=<checkout>` (measures that checkout too, the
runs alternating baseline, this, baseline, this, ...; the records of the two are then
compared field by field, timings and provenance left out), `lme.repeats=<n>` (runs per
checkout, default 1). Any other override goes to the run (e.g. `limit.conversations=4`:
comparing the peaks at N and 4N questions shows whether memory grows with them).

Offline figures on a shared machine: compare ratios from one invocation.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median
from typing import Any

from bench.errors import ConfigError
from bench.paths import PROJECT_ROOT
from bench.perf.busy import check_checkout

SUBSET = "longmemeval-s-subset16.json"
TIMING_FIELDS = ("latency_ms", "retrieve_ms")
"""Result fields that differ between any two runs (wall-clock measurements)."""


def figures(overrides: list[str]) -> dict[str, Any]:
    """This checkout's figures (and the baseline's, alternating), plus the record check."""
    settings = {o.split("=", 1)[0]: o.split("=", 1)[1] for o in overrides if o.startswith("lme.")}
    rest = [o for o in overrides if not o.startswith("lme.")]
    path = _subset(settings.get("lme.path"))
    repeats = _repeats(settings.get("lme.repeats", "1"))
    baseline = Path(settings["lme.baseline"]) if "lme.baseline" in settings else None
    if baseline is not None:
        check_checkout(baseline, "lme.baseline")
    args = ["dataset=longmemeval", f"dataset.path={path}", "progress=false", *rest]
    runs: dict[str, list[dict[str, Any]]] = {"this": [], "baseline": []}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(repeats):
            if baseline is not None:
                runs["baseline"].append(measure(baseline, args, Path(tmp, f"baseline-{i}")))
            runs["this"].append(measure(PROJECT_ROOT, args, Path(tmp, f"this-{i}")))
        out: dict[str, Any] = {"offline": True, "file": str(path), "overrides": rest}
        out["this"] = summary(runs["this"])
        if baseline is not None:
            out["baseline"] = {"checkout": str(baseline), **summary(runs["baseline"])}
            out["ratio_this_over_baseline"] = {
                k: round(out["this"][k] / out["baseline"][k], 3)
                for k in ("wall_s", "cpu_s", "peak_rss_mib")
                if out["baseline"][k]
            }
            out["records_differing"] = differing(Path(tmp, "baseline-0"), Path(tmp, "this-0"))
    return out


def measure(checkout: Path, args: list[str], out: Path) -> dict[str, Any]:
    """One `bench.run` of `checkout` into `out`: wall s, CPU s, peak RSS MiB, exit status."""
    env = {**os.environ, "PYTHONPATH": str(checkout.resolve())}
    command = [sys.executable, "-m", "bench.run", *args, f"out={out}"]
    started = time.perf_counter()
    proc = subprocess.Popen(
        command, cwd=checkout, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    assert proc.stderr is not None
    err = proc.stderr.read().decode(errors="replace")
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    records = len(list((out / "questions").glob("*.json")))
    if proc.returncode not in (0, 1) or not records:  # 1 with no record: a crash
        tail = (err.strip().splitlines() or ["(no output)"])[-1]
        raise ConfigError(f"bench.perf lme: the run of {checkout} failed: {tail}")
    return {
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_rss_mib": usage.ru_maxrss / 1024,  # KiB on Linux
        "records": records,
    }


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The median of each figure over the runs, rounded; how many runs."""
    keys = ("wall_s", "cpu_s", "peak_rss_mib")
    out: dict[str, Any] = {k: round(median(r[k] for r in runs), 1) for k in keys}
    return {**out, "records": runs[0]["records"], "runs": len(runs)}


def comparable(record: dict[str, Any]) -> dict[str, Any]:
    """A record without provenance and the arms' timing fields."""
    clone = {k: v for k, v in record.items() if k != "provenance"}
    clone["arms"] = {
        name: {k: v for k, v in result.items() if k not in TIMING_FIELDS}
        for name, result in record.get("arms", {}).items()
    }
    return clone


def differing(a: Path, b: Path) -> int:
    """Question files present in only one of two runs, or whose comparable records differ."""
    files = {p.name for p in (a / "questions").glob("*.json")}
    files |= {p.name for p in (b / "questions").glob("*.json")}
    count = 0
    for name in sorted(files):
        pa, pb = a / "questions" / name, b / "questions" / name
        if not (pa.is_file() and pb.is_file()):
            count += 1
            continue
        left, right = (comparable(json.loads(p.read_text(encoding="utf-8"))) for p in (pa, pb))
        count += left != right
    return count


def _subset(given: str | None) -> Path:
    """`lme.path`, else the subset in `$BENCH_DATA_DIR`; ConfigError when it is missing."""
    root = os.environ.get("BENCH_DATA_DIR", "")
    path = Path(given) if given else Path(root, SUBSET)
    if not path.is_file():
        raise ConfigError(
            f"bench.perf lme: {path} not found: set BENCH_DATA_DIR to the folder holding "
            f"{SUBSET} or give lme.path=<LongMemEval file>"
        )
    return path.resolve()


def _repeats(value: str) -> int:
    """`lme.repeats` as a count >= 1; ConfigError otherwise."""
    if not value.isdigit() or int(value) < 1:
        raise ConfigError(f"lme.repeats={value}: expected a whole number, >= 1")
    return int(value)
