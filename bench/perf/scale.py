"""`python -m bench.perf scale [-- scale.<key>=<value> ...]`: cost against conversation length.

Two series of workloads, written as suite files (the `bench.suite` format) in a
temporary folder, every point measured per arm in its own process (bench/perf/scale_child.py):

- `beam`: growing prefixes of one real BEAM conversation (`scale.conversation`, default
  `1` of the 128K tier in `$BENCH_DATA_DIR/beam-100k`): the first messages holding
  `scale.fractions` of its tokens; queries are its probing questions whose evidence lies
  inside the prefix. Named `beam-synthetic` when `scale.beam` is a synthetic tier
  (bench/loaders/beam_synthetic.py): `scale.beam=<10M synthetic tier>
  scale.fractions=0.1,0.2,0.5,1` gives the 1M, 2M, 5M and 10M-token points;
- `niah`: haystacks of `scale.niah` tokens made by concatenating the tier's
  conversations in an order drawn with `scale.seed` (cycled when a size exceeds them),
  with needles planted at fixed depths (bench/suite/niah.py); the order is recorded.

Per point: ingestion wall and CPU seconds and seconds per 1,000 tokens, peak memory and
what ingestion added to it, store size on disk, recall@10 of the queries (a check that
the arm kept the conversation) and the arm's own ingestion stats. Per arm and series,
the growth exponent (bench/perf/growth.py) of CPU and wall time, store size, the
point's peak memory and what ingestion added to it and, where the arm reports them, its
valid hot set (`hot_valid`) and hot rows (`hot_rows`, superseded records included); any
super-linear time, store or memory, and any valid hot set that is not flat, is listed under
`flags`. Everything is offline (the offline embedder; the rule extractor).

Settings (`scale.<key>=<value>` after `--`): `arms` (default `rag,neuromorphic,tuned`),
`beam` (a BEAM tier folder), `conversation`, `fractions` (default `0.125,0.25,0.5,1`),
`niah` (token sizes, default `250000,500000,1000000`), `lme_sessions` (sessions of
LongMemEval-M-shaped haystacks, one question each, e.g. `50,100,250,500`; default none)
and `lme` (the LongMemEval-S-shaped file they are built from), `seed` (0), `budget_s` (900: no
point starts after this many seconds; the rest are listed as skipped), `timeout_s` (600
per point), `isolate` (true: one process per point; false measures in this process, so
memory figures are the process's and not the point's) and `quick` (true: the BEAM
fixture, fractions `0.5,1`, NIAH sizes `2000,4000,8000`; seconds, for tests). An empty
list (`scale.fractions=[]`, `scale.niah=[]`) leaves that series out.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from bench.errors import ConfigError
from bench.paths import PROJECT_ROOT
from bench.perf.growth import growth_exponent
from bench.suite.model import Suite, suite_to_json

FIXTURE = PROJECT_ROOT / "datasets" / "fixtures" / "beam"
FITTED = (
    "ingest_cpu_s",
    "ingest_wall_s",
    "store_bytes",
    "peak_rss_mb",
    "ingest_rss_mb",
    "hot_valid",
    "hot_rows",
)
"""The costs whose growth exponent is fitted, per arm and series."""
WATCHED = {
    "ingest_cpu_s": "ingestion time",
    "store_bytes": "store size",
    "ingest_rss_mb": "ingestion memory",
    "peak_rss_mb": "peak memory",
}
"""Costs flagged when their growth is super-linear (and the hot set when not flat)."""


@dataclass(frozen=True)
class ScaleSettings:
    """What `bench.perf scale` measures and how long it may take."""

    arms: tuple[str, ...] = ("rag", "neuromorphic", "tuned")
    """The arms measured (their default options)."""
    beam: str | None = None
    """BEAM tier folder; None: `$BENCH_DATA_DIR/beam-100k`, else the fixture."""
    conversation: str = "1"
    """The BEAM conversation (folder name) whose prefixes form the `beam` series."""
    fractions: tuple[float, ...] = (0.125, 0.25, 0.5, 1.0)
    """Prefix sizes, as fractions of the conversation's tokens."""
    niah: tuple[int, ...] = (250_000, 500_000, 1_000_000)
    """NIAH haystack sizes in tokens."""
    lme_sessions: tuple[int, ...] = ()
    """LongMemEval-M-shaped haystacks, in sessions (bench/perf/scale_lme.py); () leaves them out."""
    lme: str | None = None
    """LongMemEval-S-shaped file they are built from; None: the shared subset, else the fixture."""
    seed: int = 0
    """Seed of the NIAH conversation order and needles."""
    budget_s: float = 900.0
    """No point starts after this many seconds."""
    timeout_s: float = 600.0
    """A point taking longer is stopped and reported as an error."""
    isolate: bool = True
    """One process per point (peak memory is the point's own)."""
    quick: bool = False
    """The fixture and tiny sizes (seconds)."""


def parse_settings(overrides: list[str]) -> ScaleSettings:
    """`scale.<key>=<value>` overrides onto the defaults; anything else is one ConfigError."""
    given: dict[str, str] = {}
    names = {f.name: f for f in fields(ScaleSettings)}
    for item in overrides:
        key, sep, value = item.partition("=")
        name = key.removeprefix("scale.")
        if not sep or not key.startswith("scale.") or name not in names:
            raise ConfigError(
                f"bench.perf scale override {item!r}: expected scale.<key>=<value> "
                f"with key one of {', '.join(names)}"
            )
        given[name] = value
    settings = ScaleSettings()
    if _flag(given.get("quick", "false"), "quick"):
        settings = replace(settings, quick=True, fractions=(0.5, 1.0), niah=(2000, 4000, 8000))
    return replace(settings, **{k: _value(k, v) for k, v in given.items() if k != "quick"})


def _value(name: str, raw: str) -> Any:
    """One setting's value from its text (lists comma-separated, brackets optional)."""
    items = [p.strip() for p in raw.strip().strip("[]").split(",") if p.strip()]
    try:
        if name == "arms":
            return tuple(items)
        if name == "fractions":
            values = tuple(float(p) for p in items)
            if any(not 0 < f <= 1 for f in values):
                raise ValueError
            return values
        if name in ("niah", "lme_sessions"):
            sizes = tuple(int(p) for p in items)
            if any(s < 1 for s in sizes):
                raise ValueError
            return sizes
        if name in ("seed",):
            return int(raw)
        if name in ("budget_s", "timeout_s"):
            return float(raw)
        if name == "isolate":
            return _flag(raw, name)
        return raw if name in ("beam", "conversation", "lme") else None
    except ValueError:
        raise ConfigError(
            f"scale.{name}={raw}: not a valid value; see `python -m bench.perf --help`"
        ) from None


def _flag(raw: str, name: str) -> bool:
    if raw.lower() not in ("true", "false"):
        raise ConfigError(f"scale.{name}={raw}: give true or false")
    return raw.lower() == "true"


def check_arms(arms: tuple[str, ...]) -> None:
    """Refuse an empty or unknown arm list up front (as `bench.run` would), in one line."""
    from hydra import compose, initialize_config_dir

    from bench.paths import CONF_DIR
    from bench.run.settings import arm_specs, load_run_config

    if not arms:
        raise ConfigError("scale.arms is empty: name at least one arm, e.g. scale.arms=rag")
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = load_run_config(compose(config_name="config", overrides=[]))
    cfg.arms = list(arms)
    arm_specs(cfg)


def beam_folder(settings: ScaleSettings) -> Path:
    """The BEAM folder measured: the setting, else the shared 128K tier, else the fixture."""
    if settings.beam:
        folder = Path(settings.beam)
        if not folder.is_dir():
            raise ConfigError(f"scale.beam={settings.beam}: no such folder")
        return folder
    data = os.environ.get("BENCH_DATA_DIR")
    shared = Path(data) / "beam-100k" if data else None
    return shared if shared and shared.is_dir() and not settings.quick else FIXTURE


def workloads(settings: ScaleSettings, folder: Path) -> tuple[list[tuple[str, Suite]], list[str]]:
    """(series, suite) for every point, smallest first, and the NIAH conversation order."""
    from bench.loaders.beam import load_beam
    from bench.loaders.beam_source import is_synthetic
    from bench.perf.scale_lme import lme_file, lme_suites
    from bench.suite.adapters.beam import load as beam_suites
    from bench.suite.adapters.beam import tier_label
    from bench.suite.niah import NiahSpec, niah_suite
    from bench.tokens import TokenCounter

    tokens = TokenCounter()
    split = "10m" if is_synthetic(folder) else ""  # what `dataset.tier` reads it as
    wanted = [
        s for s in beam_suites(folder, split) if s.name.rsplit("-", 1)[1] == settings.conversation
    ]
    if not wanted:
        raise ConfigError(
            f"scale.conversation={settings.conversation}: no such conversation in {folder}"
        )
    series = "beam-synthetic" if is_synthetic(folder) else "beam"
    cut = prefixes(wanted[0], settings.fractions, tokens, partial=series == "beam-synthetic")
    points = [(series, s) for s in cut]
    if not points and not settings.niah and not settings.lme_sessions:
        raise ConfigError("scale.fractions=[] and scale.niah=[]: nothing to measure")
    source = (
        list(load_beam(folder, "beam", tier_label(folder, split)).conversations)
        if settings.niah
        else []
    )
    random.Random(settings.seed).shuffle(source)
    for size in settings.niah:
        points.append(("niah", niah_suite(source, NiahSpec(size=size, seed=settings.seed), tokens)))
    if settings.lme_sessions:
        lme = lme_suites(lme_file(settings.lme), settings.lme_sessions)
        points.extend(("lme-m", suite) for suite in lme)
    return points, [c.conversation_id for c in source]


def prefixes(
    suite: Suite, fractions: tuple[float, ...], tokens: Any, partial: bool = False
) -> list[Suite]:
    """The suite cut after the first memory whose running token count reaches each fraction.

    A prefix keeps the queries whose relevant ids all lie inside it (abstentions left out);
    with `partial` (a synthetic tier, whose evidence names every copy), those with any
    relevant id inside it, judged on those ids only.
    """
    counts = tokens.count_many([m.text for m in suite.memories])
    running, total = [], 0
    for count in counts:
        total += count
        running.append(total)
    out = []
    for fraction in sorted(set(fractions)):
        cut = next(i for i, r in enumerate(running) if r >= fraction * total) + 1
        memories = suite.memories[:cut]
        kept = {m.id for m in memories}
        queries = tuple(
            replace(q, relevance={k: v for k, v in q.relevance.items() if k in kept})
            for q in suite.queries
            if q.relevance and (set(q.relevance) & kept if partial else set(q.relevance) <= kept)
        )
        name = f"{suite.name}-p{round(fraction * 1000):04d}"
        out.append(Suite(name, suite.kind, suite.version, memories, queries))
    return out


def run_point(suite_file: Path, arm: str, out: Path, settings: ScaleSettings) -> dict[str, Any]:
    """One (arm, workload) point: in a fresh process, or here when `isolate` is false."""
    if not settings.isolate:
        from bench.perf.scale_child import measure

        return measure(suite_file, arm, out)
    args = [sys.executable, "-m", "bench.perf.scale_child", str(suite_file), arm, str(out)]
    try:
        proc = subprocess.run(
            args, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=settings.timeout_s
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {settings.timeout_s:g} s (scale.timeout_s)"}
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["no message"])[-1]}
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def figures(overrides: list[str]) -> dict[str, Any]:
    """Every point for every arm within the budget, then the fitted growth per arm."""
    from bench.files import write_text_atomic
    from bench.loaders.beam_source import folder_sha256

    settings = parse_settings(overrides)
    check_arms(settings.arms)
    folder = beam_folder(settings)
    started = time.perf_counter()
    points, order = workloads(settings, folder)
    results: dict[str, list[dict[str, Any]]] = {arm: [] for arm in settings.arms}
    skipped: list[str] = []
    with tempfile.TemporaryDirectory(prefix="armbench-scale-") as tmp:
        for series, suite in points:
            path = Path(tmp) / "suites" / f"{suite.name}.json"
            write_text_atomic(path, json.dumps(suite_to_json(suite), ensure_ascii=False))
            for arm in settings.arms:
                if time.perf_counter() - started > settings.budget_s:
                    skipped.append(f"{arm}@{suite.name}")
                    continue
                figure = run_point(path, arm, Path(tmp) / f"{arm}-{suite.name}", settings)
                row = {"series": series, "workload": suite.name, "isolated": settings.isolate}
                results[arm].append({**row, **figure})
    return {
        "settings": {**_plain(settings), "beam": str(folder)},
        "beam_sha256": folder_sha256(folder),
        "niah_conversation_order": order,
        "cpus": os.cpu_count(),
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        "points": results,
        "fits": {arm: fits(rows) for arm, rows in results.items()},
        "flags": flags(results),
        "skipped": skipped,
        "elapsed_s": round(time.perf_counter() - started, 1),
        "offline": True,
    }


def _plain(settings: ScaleSettings) -> dict[str, Any]:
    return {f.name: getattr(settings, f.name) for f in fields(settings)}


def _cost(row: dict[str, Any], name: str) -> float | None:
    """A row's cost by name (its own figures, then the arm's stats); memory only if isolated."""
    if name.endswith("_rss_mb") and not row.get("isolated", True):
        return None
    value = row.get(name, row.get("stats", {}).get(name))
    return float(value) if isinstance(value, int | float) else None


def fits(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per series: the growth exponent of each fitted cost against tokens.

    The series are never pooled: NIAH haystacks yield more facts per token than one BEAM
    conversation, so a fit over both would mix content with length.
    """
    out: dict[str, dict[str, Any]] = {}
    for series in dict.fromkeys(["beam", "niah", *(r["series"] for r in rows)]):
        chosen = [r for r in rows if "error" not in r and r["series"] == series]
        per: dict[str, Any] = {}
        for name in FITTED:
            pairs = [(r["tokens"], c) for r in chosen if (c := _cost(r, name)) is not None]
            fit = growth_exponent([p[0] for p in pairs], [p[1] for p in pairs]) if pairs else None
            if fit is not None:
                per[name] = fit
        out[series] = per
    return out


def flags(results: dict[str, list[dict[str, Any]]]) -> list[str]:
    """Bad growth, one line each: super-linear time, store or memory; a hot set not flat."""
    lines = []
    for arm, rows in results.items():
        for series, per in fits(rows).items():
            for name, fit in per.items():
                bad = (name in WATCHED and fit["growth"] == "super-linear") or (
                    name == "hot_valid" and fit["growth"] != "flat"
                )
                if bad:
                    what = WATCHED.get(name, "hot set")
                    lines.append(
                        f"{arm} ({series}): {what} grows {fit['growth']} "
                        f"(exponent {fit['exponent']}, r² {fit['r2']}, {fit['points']} points)"
                    )
        lines.extend(f"{arm}: {r['workload']} failed: {r['error']}" for r in rows if "error" in r)
    return lines
