"""Start-up figures (`python -m bench.perf startup`): import totals and the waits users see.

For each entry module, a fresh interpreter runs `import <module>` under
`-X importtime`; the total is the sum of the cumulative times of the top-level imports
(lines whose name is not indented): everything that import pulled in, plus the few
modules the interpreter itself imports at start (site, encodings). The
interpreter's own start is reported separately as `python -c pass` wall time, so
ratios between modules are meaningful within one run.

Then the commands a user waits on, each in a fresh interpreter, as wall time and as
CPU time (user + system of the child, from `resource.getrusage`): CPU time is what
the command costs on an idle machine, wall time what it took on this one (on a shared
machine the two differ by the load). `summarise_cli`: `python -m bench.summarise` on
the committed full LoCoMo run. `resume_finished`: `python -m bench.run dataset=locomo`
on a copy of it (every record present: nothing pending). `hydra_compose`: one Hydra
`compose` of the run config, timed inside the child. Standard library only.
"""

from __future__ import annotations

import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.paths import PROJECT_ROOT

MODULES = ("bench", "bench.summarise", "bench.run")
COMMITTED_RUN = PROJECT_ROOT / "results" / "locomo-offline-v0.3.0"
_COMPOSE = (
    "import time; t, tc = time.perf_counter(), time.process_time()\n"
    "from hydra import compose, initialize_config_dir\n"
    "from bench.paths import CONF_DIR\n"
    "i, ic = time.perf_counter(), time.process_time()\n"
    "with initialize_config_dir(config_dir=str(CONF_DIR), version_base='1.3'):\n"
    "    c, cc = time.perf_counter(), time.process_time()\n"
    "    compose(config_name='config', overrides=['dataset=locomo'])\n"
    "print(i - t, ic - tc, time.perf_counter() - c, time.process_time() - cc)"
)


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
            capture_output=True,
            text=True,
            check=True,
        )
        walls.append(time.perf_counter() - started)
        total, count = importtime_total_us(done.stderr)
        totals.append(total)
    return {
        "importtime_total_s": round(statistics.median(totals) / 1e6, 3),
        "modules": count,
        "wall_s": round(statistics.median(walls), 3),
    }


def child_times(args: list[str], repeats: int = 3) -> dict[str, float]:
    """Median wall and CPU seconds (user + system) of running `args` in a fresh process."""
    walls, cpus = [], []
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(args, check=True, cwd=PROJECT_ROOT, capture_output=True)
        walls.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    wall, cpu = statistics.median(walls), statistics.median(cpus)
    return {"wall_s": round(wall, 3), "cpu_s": round(cpu, 3)}


def hydra_compose_figures(repeats: int = 3) -> dict[str, float]:
    """Median seconds (wall and CPU) to import Hydra and to compose the run config once.

    `bench.run` composes three times per start: once itself (bad overrides become one
    line, a read-only `out` gets console logging), then Hydra twice (`get_mode`, `run`).
    """
    rows = []
    for _ in range(repeats):
        done = subprocess.run(
            [sys.executable, "-c", _COMPOSE],
            cwd=PROJECT_ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        rows.append([float(x) for x in done.stdout.split()])
    names = ("import_wall_s", "import_cpu_s", "compose_wall_s", "compose_cpu_s")
    return {name: round(statistics.median(r[i] for r in rows), 3) for i, name in enumerate(names)}


def waits() -> dict[str, object]:
    """The summariser CLI and the resume of a finished run, on the committed full run."""
    if not (COMMITTED_RUN / "questions").is_dir():
        return {"skipped": f"{COMMITTED_RUN} absent"}
    out: dict[str, object] = {
        "summarise_cli": child_times([sys.executable, "-m", "bench.summarise", str(COMMITTED_RUN)])
    }
    with tempfile.TemporaryDirectory(prefix="armbench-resume-") as tmp:
        run = Path(tmp, "run")
        shutil.copytree(COMMITTED_RUN, run)
        args = [sys.executable, "-m", "bench.run", "dataset=locomo", f"out={run}", "progress=false"]
        try:
            out["resume_finished"] = child_times(args)
        except subprocess.CalledProcessError as exc:  # LoCoMo not available offline
            out["resume_finished"] = {"skipped": (exc.stderr or b"").decode()[-300:].strip()}
    return out


def figures() -> dict[str, object]:
    """Import totals per entry module, the bare interpreter start, Hydra, the waits."""
    bare = []
    for _ in range(3):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        bare.append(time.perf_counter() - started)
    out: dict[str, object] = {"python_start_s": round(statistics.median(bare), 3)}
    for module in MODULES:
        out[module] = module_figures(module)
    out["hydra"] = hydra_compose_figures()
    out.update(waits())
    out["target"] = (
        "import bench <= 0.3 s; resume of a finished run <= 2 s wall; summarise CLI <= 0.3 s"
    )
    return out
