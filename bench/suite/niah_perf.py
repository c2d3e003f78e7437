"""NIAH scale figures for `python -m bench.perf niah`.

Per arm and haystack size: recall@10, ingest seconds, retrieval ms per query, peak
memory, and the process's CPU seconds (user + system: on shared, oversubscribed cores
the wall-clock figures stretch with the load, CPU time much less).

Each (arm, size) runs in its own process (`python -m bench.suite.niah_perf SUITE ARM OUT`)
so its peak resident memory (`bench/rss.py`: VmHWM) is its own.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.paths import CONF_DIR, PROJECT_ROOT
from bench.rss import peak_rss_mb

SIZES = (1_000, 10_000, 100_000, 1_000_000)
ARMS = ("raw", "rag", "neuromorphic", "tuned")


def niah_figures(sizes: tuple[int, ...] = SIZES, arms: tuple[str, ...] = ARMS) -> dict[str, object]:
    """Generate the suites once, then measure every arm on every size."""
    from bench.suite.niah_write import default_source, write_niah

    figures: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as tmp:
        files = write_niah(Path(tmp) / "suites", list(sizes), 0, default_source())
        for size, suite in zip(sizes, files, strict=True):
            for arm in arms:
                out = Path(tmp) / f"{arm}-{size}"
                proc = subprocess.run(
                    [sys.executable, "-m", "bench.suite.niah_perf", str(suite), arm, str(out)],
                    cwd=PROJECT_ROOT,
                    capture_output=True,
                    text=True,
                    check=False,
                )
                key = f"{arm}@{size}"
                figures[key] = (
                    json.loads(proc.stdout.strip().splitlines()[-1])
                    if proc.returncode == 0
                    else {"error": proc.stderr.strip().splitlines()[-1:]}
                )
    return figures


def _measure(suite: str, arm: str, out: str) -> dict[str, object]:
    from hydra import compose, initialize_config_dir

    from bench.suite.__main__ import run
    from bench.suite.config import load_suite_config

    overrides = [
        f"suite.path={suite}",
        "suite.adapter=niah",
        f"arms=[{arm}]",
        f"out={out}",
        "progress=false",
        "suite.cutoffs=[10]",
    ]
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = load_suite_config(compose(config_name="suite", overrides=overrides))
    report = run(cfg)["arms"][arm]
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return {
        "queries": report["queries"],
        "recall_at_10": report["retrieval"]["byK"]["10"]["recall"],
        "ingest_s": report["ingest_s"],
        "retrieve_ms_per_query": report["latency"]["avg"],
        "peak_rss_mb": peak_rss_mb(),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
    }


def main(argv: list[str] | None = None) -> None:
    """`python -m bench.suite.niah_perf SUITE ARM OUT`: one (arm, size) figure as JSON."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m bench.suite.niah_perf",
        description="One NIAH figure in its own process (run by `python -m bench.perf niah`).",
    )
    for name in ("suite", "arm", "out"):
        parser.add_argument(name)
    args = parser.parse_args(argv)
    print(json.dumps(_measure(args.suite, args.arm, args.out)))


if __name__ == "__main__":
    main()
