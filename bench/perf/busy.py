"""`python -m bench.perf server`: how busy a run keeps a model server's slots, per phase.

A run with the LLM extractor, an LLM answerer and an LLM judge (default: the smoke
dataset, arms neuromorphic + tuned, cache off, `provider=llamacpp`) goes against
`bench.perf.slot_stub` in a child process: a server with a fixed latency per request and
N slots (defaults 0.2 s and 4, the run's concurrency set to N). The stub logs when each
request held a slot; from that log

    busy(windows) = Σ ∫ min(in_flight(t), N) dt / (N x Σ |window|)

over the whole run (first arrival to last reply) and per phase. A run alternates
stretches of extraction requests (`ingest`) and of answer and judge requests
(`answer+judge`); each stretch is a window from its first arrival to its last reply, and
inside each answer+judge stretch `answer` and `judge` get the window of their own
requests. `busy` counts every request in flight in a window, whatever its kind;
`ideal_s` is the least time the phase's requests need (requests x latency / N). A
second run against an instant stub (latency 0) gives the harness CPU per model call
(this process's CPU over the requests the stub answered; the stub's CPU is its own).

Settings among the overrides: `stub.latency=<s>`, `stub.slots=<n>`, and
`stub.baseline=<checkout>`, which measures that checkout (say, the previous release) the
same way in a child process and reports it beside this one as `baseline`. Any other
override goes to the run (e.g. `dataset=locomo limit.conversations=2 limit.per_conversation=30`).

Offline (a stub, not a model): the figures measure the harness's scheduling, not a
server. The module imports only what older checkouts also have, which is what lets it
measure one (`PYTHONPATH=<checkout> python bench/perf/busy.py [overrides]`).
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

STUB = Path(__file__).with_name("slot_stub.py")
LATENCY_S = 0.2
SLOTS = 4


def busy_fraction(rows: list[list[Any]], slots: int, start: float, end: float) -> float:
    """∫ min(in_flight, slots) dt / (slots x (end - start)) over [start, end] (0 if empty).

    `rows` are `[kind, arrived, started, ended]`; a request is in flight (holds a slot)
    from `started` to `ended`.
    """
    if end <= start:
        return 0.0
    events = sorted(
        [(max(r[2], start), 1) for r in rows if r[3] > start and r[2] < end]
        + [(min(r[3], end), -1) for r in rows if r[3] > start and r[2] < end]
    )
    busy, level, last = 0.0, 0, start
    for t, step in events:
        busy += min(level, slots) * (t - last)
        level, last = level + step, t
    return busy / (slots * (end - start))


def stretches(rows: list[list[Any]]) -> list[tuple[str, list[list[Any]]]]:
    """Consecutive requests (by arrival) of one phase: `ingest` or `answer+judge`."""
    out: list[tuple[str, list[list[Any]]]] = []
    for row in sorted(rows, key=lambda r: r[1]):
        phase = "ingest" if row[0] == "extract" else "answer+judge"
        if out and out[-1][0] == phase:
            out[-1][1].append(row)
        else:
            out.append((phase, [row]))
    return out


def _figure(
    rows: list[list[Any]], groups: list[list[list[Any]]], stats: dict[str, Any]
) -> dict[str, Any]:
    """Requests, summed window, ideal time and busy fraction over the windows of `groups`."""
    slots, latency = stats["slots"], stats["latency_s"]
    windows = [(min(r[1] for r in g), max(r[3] for r in g)) for g in groups if g]
    span = sum(end - start for start, end in windows)
    busy = sum(busy_fraction(rows, slots, a, b) * (b - a) for a, b in windows)
    count = sum(len(g) for g in groups)
    return {
        "requests": count,
        "window_s": round(span, 2),
        "ideal_s": round(count * latency / slots, 2),
        "busy": round(busy / span, 3) if span > 0 else 0.0,
    }


def phase_figures(stats: dict[str, Any]) -> dict[str, Any]:
    """Busy fraction overall and per phase from the stub's `/stats`."""
    rows = stats["requests"]
    if not rows:
        return {}
    parts = stretches(rows)
    qa = [group for phase, group in parts if phase == "answer+judge"]
    out = {
        "overall": _figure(rows, [rows], stats),
        "ingest": _figure(rows, [g for phase, g in parts if phase == "ingest"], stats),
        "answer+judge": _figure(rows, qa, stats),
        "answer": _figure(rows, [[r for r in g if r[0] == "answer"] for g in qa], stats),
        "judge": _figure(rows, [[r for r in g if r[0] == "judge"] for g in qa], stats),
    }
    out["ingest"]["distinct"] = stats["distinct"].get("extract", 0)
    return out


@contextmanager
def stub(latency_s: float, slots: int) -> Iterator[str]:
    """A running slot stub in a child process; yields its `/v1` base URL."""
    args = [sys.executable, str(STUB), "--latency", str(latency_s), "--slots", str(slots)]
    proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait(timeout=10)


def stub_stats(base_url: str) -> dict[str, Any]:
    """The stub's `/stats`."""
    root = base_url.removesuffix("/v1")
    with urllib.request.urlopen(f"{root}/stats", timeout=10) as reply:  # noqa: S310 - loopback
        data: dict[str, Any] = json.loads(reply.read())
    return data


def measured_run(overrides: list[str], latency_s: float, slots: int) -> dict[str, Any]:
    """One run against a fresh stub: wall, this process's CPU, the stub's log, accounting."""
    from hydra import compose, initialize_config_dir
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    from bench.errors import ConfigError
    from bench.paths import CONF_DIR
    from bench.run.pipeline import run_benchmark
    from bench.run.settings import check_group_overrides, load_run_config

    with stub(latency_s, slots) as base_url, tempfile.TemporaryDirectory() as tmp:
        full = [
            "dataset=smoke",
            "provider=llamacpp",
            "judge=llm",
            "arms=[neuromorphic,tuned]",
            "provider.cache.mode=off",
            f"provider.answerer.concurrency={slots}",
            *overrides,
            f"provider.answerer.base_url={base_url}",
            f"out={tmp}/run",
            "progress=false",
        ]
        check_group_overrides(full)
        try:
            with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
                cfg = load_run_config(compose(config_name="config", overrides=full))
        except (HydraException, OmegaConfBaseException) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ConfigError(f"bench.perf server overrides: {first}") from None
        cpu, wall = time.process_time(), time.perf_counter()
        run_benchmark(cfg)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        meta = json.loads(Path(tmp, "run", "run.json").read_text(encoding="utf-8"))
        return {
            "wall_s": wall,
            "cpu_s": cpu,
            "stats": stub_stats(base_url),
            "accounting": meta.get("accounting", {}).get("total", {}),
        }


def figures(overrides: list[str]) -> dict[str, Any]:
    """Busy fractions on a latency/slots stub, then CPU per call on an instant one."""
    settings = {o.split("=", 1)[0]: o.split("=", 1)[1] for o in overrides if o.startswith("stub.")}
    rest = [o for o in overrides if not o.startswith("stub.")]
    latency_s = _number(settings, "stub.latency", LATENCY_S, float, "seconds, >= 0")
    slots = int(_number(settings, "stub.slots", SLOTS, int, "a whole number, >= 1") or 1)
    baseline = settings.get("stub.baseline")
    if baseline:
        check_checkout(Path(baseline))  # before minutes of measuring, not after
    out = measure(rest, latency_s, slots)
    if baseline:
        out["baseline"] = measure_checkout(Path(baseline), rest, latency_s, slots)
    return out


def check_checkout(checkout: Path, setting: str = "stub.baseline") -> None:
    """ConfigError (naming `setting`) unless `checkout` is the root of an armbench checkout."""
    from bench.errors import ConfigError

    if not (checkout / "bench" / "run" / "pipeline.py").is_file():
        raise ConfigError(
            f"{setting}={checkout}: not an armbench checkout (no bench/run/pipeline.py); "
            "give the root folder of one"
        )


def _number(settings: dict[str, str], key: str, default: float, kind: type, what: str) -> float:
    """`settings[key]` as `kind` (`default` when absent); ConfigError when it is not one."""
    from bench.errors import ConfigError

    if key not in settings:
        return default
    try:
        value = float(kind(settings[key]))
    except ValueError:
        value = -1.0
    if value < (1 if kind is int else 0):
        raise ConfigError(f"{key}={settings[key]}: expected {what}")
    return value


def measure(overrides: list[str], latency_s: float, slots: int) -> dict[str, Any]:
    """The figures of this checkout (see the module docstring)."""
    logging.disable(logging.INFO)  # one line per HTTP request otherwise
    try:
        busy = measured_run(overrides, latency_s, slots)
        instant = measured_run(overrides, 0.0, slots)
    finally:
        logging.disable(logging.NOTSET)
    calls = len(instant["stats"]["requests"])
    return {
        "offline": "a local stub, not a model server",
        "stub": {"latency_s": latency_s, "slots": slots},
        "overrides": overrides,
        "wall_s": round(busy["wall_s"], 2),
        "busy": phase_figures(busy["stats"]),
        "calls": {k: busy["accounting"].get(k) for k in ("calls", "http_requests", "coalesced")},
        "instant_wall_s": round(instant["wall_s"], 2),
        "harness_cpu_s": round(instant["cpu_s"], 2),
        "harness_cpu_ms_per_call": round(1000 * instant["cpu_s"] / max(1, calls), 2),
    }


def measure_checkout(
    checkout: Path, overrides: list[str], latency_s: float, slots: int
) -> dict[str, Any]:
    """`measure` run on another checkout's code, in a child process."""
    from bench.errors import ConfigError

    check_checkout(checkout)
    settings = [f"stub.latency={latency_s}", f"stub.slots={slots}"]
    env = {**os.environ, "PYTHONPATH": str(checkout.resolve())}
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), *settings, *overrides],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise ConfigError(f"stub.baseline={checkout}: the measurement failed: {tail}")
    data: dict[str, Any] = json.loads(proc.stdout)
    return {"checkout": str(checkout), **data}


if __name__ == "__main__":
    if {"-h", "--help"} & set(sys.argv[1:]):
        print("usage: python -m bench.perf.busy [stub.*=...] [overrides]  (bench.perf server's")
        print("measurement of one checkout, run by `stub.baseline=`; prints its figures as JSON)")
        sys.exit(0)
    print(json.dumps(figures(sys.argv[1:]), indent=2))
