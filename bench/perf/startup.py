"""Start-up figures (`python -m bench.perf startup`): `python -X importtime` totals.

For each entry module, a fresh interpreter runs `import <module>` under
`-X importtime`; the total is the sum of the cumulative times of the top-level imports
(lines whose name is not indented): everything that import pulled in, plus the few
modules the interpreter itself imports at start (site, encodings). The
interpreter's own start is reported separately as `python -c pass` wall time, so
ratios between modules are meaningful within one run. Standard library only.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

MODULES = ("bench", "bench.summarise", "bench.run")


def importtime_total_us(stderr: str) -> tuple[int, int]:
    """(total cumulative µs of top-level imports, number of modules imported)."""
    total, count = 0, 0
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative, name = line.removeprefix("import time:").split("|", 2)
        count += 1
        if not name.startswith("  "):  # one space of padding, then the top-level name
            total += int(cumulative)
    return total, count


def module_figures(module: str, repeats: int = 3) -> dict[str, float]:
    """Median importtime total and wall time of `import <module>` in a fresh interpreter."""
    totals, walls, count = [], [], 0
    for _ in range(repeats):
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", f"import {module}"],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        walls.append(time.perf_counter() - started)
        total, count = importtime_total_us(done.stderr)
        totals.append(total)
    return {
        "importtime_total_s": round(statistics.median(totals) / 1e6, 3),
        "modules": count,
        "wall_s": round(statistics.median(walls), 3),
    }


def figures() -> dict[str, object]:
    """Import totals per entry module plus the bare interpreter start."""
    bare = []
    for _ in range(3):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        bare.append(time.perf_counter() - started)
    out: dict[str, object] = {"python_start_s": round(statistics.median(bare), 3)}
    for module in MODULES:
        out[module] = module_figures(module)
    out["target"] = "import bench <= 0.3 s; resume of a finished run <= 2 s wall"
    return out
