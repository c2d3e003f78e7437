"""`python -m bench.perf [what ...] [-- hydra overrides]`: performance figures as JSON.

what: `components` (embedder, tokenizer, offline answerer), `summarise`, `engine`,
`ingest` (both memory arms over all of LoCoMo), `niah` (raw, rag, neuromorphic, tuned on NIAH
suites of 1k-1M tokens: recall@10, ingest s, retrieval ms/query, peak RSS), `run` (a
fresh run and its resume in a temporary folder; overrides after `--`, default
`dataset=smoke`), `offline_f1` (the offline reader's official F1 per arm; default
`dataset=locomo`), `startup` (`python -X importtime` totals of bench, bench.summarise,
bench.run; Hydra compose; wall and CPU seconds of the summarise CLI and of resuming a
finished full run), `ray` (`executor=ray` with 2 CPUs over a local run, default
`dataset=locomo`, and Ray's per-task scheduling overhead; the `ray` extra), `suite` (full
LoCoMo as suites and as screens, every default arm, stores present: wall and CPU s per
configuration against the 10 s target, ingestion apart, and a 6-configuration sweep
that ingests once; needs `$BENCH_DATA_DIR/locomo10.json`), `server` (how busy a run with
the LLM extractor, answerer and judge keeps the N slots of a local stub with a fixed
latency, per phase, and the harness CPU per model call; `bench/perf/busy.py`, settings
`stub.latency=`, `stub.slots=`, `stub.baseline=<checkout>` among the overrides), `scale`
(the memory arms' ingestion time per 1,000 tokens, peak memory and store size against
conversation length on BEAM prefixes and BEAM-built NIAH haystacks, with fitted growth
exponents and flags for bad growth; `bench/perf/scale.py`, settings `scale.<key>=` among
the overrides, `scale.quick=true` for a run of seconds), `lme` (an offline LongMemEval
run of the 16-question subset: wall, CPU, peak memory, beside a `lme.baseline=<checkout>`
with its records compared; `bench/perf/lme.py`). Default:
components, summarise, engine, run, startup. Machines are noisy:
compare ratios measured in one run.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median
from typing import Any

from bench.cli_errors import exit_status, one_line_errors
from bench.names import load_symbol
from bench.paths import PROJECT_ROOT

# Engine benchmarks live with the engine; named lazily so bench never imports arms.
ENGINE_FIGURES = "arms.neuromorphic.perf:figures"
INGESTION_FIGURES = "arms.neuromorphic.perf:ingestion_figures"

DEFAULT = ("components", "summarise", "engine", "run", "startup")


def components() -> dict[str, object]:
    """Throughput of the offline building blocks on LoCoMo-like text."""
    from bench.providers.offline_answer import answer
    from bench.providers.offline_embed import WordLlamaEmbedder
    from bench.tokens import TokenCounter

    texts = [f"Caroline: I went to the support group number {i} yesterday." for i in range(2000)]
    started = time.perf_counter()
    embedder = WordLlamaEmbedder()
    load_s = time.perf_counter() - started
    embed_s = _timed(lambda: embedder.embed(texts))
    tokens = TokenCounter()
    token_s = _timed(lambda: tokens.count_many(texts))
    context = "[Session 1 — 1:56 pm on 8 May, 2023]\n" + "\n".join(texts)
    answer("When did Caroline go to support group 5?", context)  # index once, as a run does
    answer_s = _timed(lambda: answer("When did Caroline go to support group 7?", context))
    return {
        "embedder_load_s": round(load_s, 3),
        "embed_texts_per_s": round(len(texts) / embed_s),
        "tokenize_texts_per_s": round(len(texts) / token_s),
        "offline_answer_ms_2000_lines": round(answer_s * 1000, 2),
    }


def run_figures(overrides: list[str]) -> dict[str, object]:
    """Wall time of a fresh run and of re-running it (which must compute nothing)."""
    with tempfile.TemporaryDirectory() as tmp:
        args = [sys.executable, "-m", "bench.run", *(overrides or ["dataset=smoke"])]
        args += [f"out={tmp}/run", "progress=false"]
        fresh = _timed(
            lambda: subprocess.run(args, check=True, cwd=PROJECT_ROOT, capture_output=True)
        )
        resume = _timed(
            lambda: subprocess.run(args, check=True, cwd=PROJECT_ROOT, capture_output=True)
        )
        summ = [sys.executable, "-m", "bench.summarise", f"{tmp}/run", "--json"]
        summarise_s = _timed(lambda: _run_quietly(summ))
        questions = len(list(Path(tmp, "run", "questions").glob("*.json")))
        safety = median(_timed(lambda: _safety_checks(Path(tmp, "run"))) for _ in range(5))
    return {
        "overrides": overrides or ["dataset=smoke"],
        "questions": questions,
        "fresh_run_s": round(fresh, 2),
        "resume_run_s": round(resume, 2),
        "resume_over_fresh": round(resume / fresh, 3),
        "summarise_cli_s": round(summarise_s, 3),
        "resume_safety_checks_s": round(safety, 4),
        "resume_safety_over_resume": round(safety / resume, 4),
    }


def _safety_checks(run_dir: Path) -> None:
    """What a resume adds for safety: the run lock, the orphan sweep, every store check."""
    from bench.run.directory import RunDirectory
    from bench.run.lock import run_lock

    file_problem = load_symbol("arms.neuromorphic.store_check:file_problem")
    with run_lock(run_dir):
        RunDirectory(run_dir).remove_orphans()
        for checkpoint in run_dir.glob("stores/*/*/checkpoint.json"):
            state = json.loads(checkpoint.read_text(encoding="utf-8")).get("state", {})
            if (checkpoint.parent / "archive.sqlite").exists():
                file_problem(checkpoint.parent, state)


def _run_quietly(args: list[str]) -> None:
    subprocess.run(args, check=True, cwd=PROJECT_ROOT, capture_output=True)


def _timed(fn: Any, repeat: int = 1) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return median(times)


WITH_OVERRIDES = {
    "offline_f1": "bench.perf.offline_f1:offline_f1_figures",
    "ray": "bench.perf.ray_scale:ray_figures",
    "server": "bench.perf.busy:figures",
    "scale": "bench.perf.scale:figures",
    "lme": "bench.perf.lme:figures",
}
"""Groups that take the overrides after `--`, named lazily (`module:function`)."""
WITHOUT_OVERRIDES = {
    "summarise": "bench.perf.summarise:figures",
    "engine": ENGINE_FIGURES,
    "niah": "bench.suite.niah_perf:niah_figures",
    "suite": "bench.perf.suite_speed:figures",
    "startup": "bench.perf.startup:figures",
}
"""Groups that take no argument, named lazily."""


def collect(what: list[str], overrides: list[str]) -> dict[str, object]:
    """The figures for each requested group."""
    out: dict[str, object] = {}
    for name in what:
        if name == "components":
            out[name] = components()
        elif name == "ingest":
            from bench.loaders.resolve import resolve_data_file

            out[name] = load_symbol(INGESTION_FIGURES)(resolve_data_file(_locomo_config()))
        elif name == "run":
            out[name] = run_figures(overrides)
        elif name in WITH_OVERRIDES:
            out[name] = load_symbol(WITH_OVERRIDES[name])(overrides)
        elif name in WITHOUT_OVERRIDES:
            out[name] = load_symbol(WITHOUT_OVERRIDES[name])()
        else:
            from bench.names import unknown

            groups = [*DEFAULT, *sorted(set(WITH_OVERRIDES) | {"ingest", "niah", "suite"})]
            raise unknown("perf group", name, groups, "bench.perf")
    return out


def _usage() -> str:
    """`--help`: the command line and the groups (this module's docstring)."""
    head, _, body = (__doc__ or "").partition("\n\n")
    return f"usage: python -m bench.perf [-h] [what ...] [-- hydra overrides]\n\n{head}\n\n{body}"


def _locomo_config() -> Any:
    import yaml

    from bench.config import DatasetConfig
    from bench.paths import CONF_DIR

    return DatasetConfig(**yaml.safe_load((CONF_DIR / "dataset" / "locomo.yaml").read_text()))


def main(argv: list[str] | None = None) -> int:
    """Print the requested figures as one JSON object."""
    args = list(sys.argv[1:] if argv is None else argv)
    overrides = args[args.index("--") + 1 :] if "--" in args else []
    what = (args[: args.index("--")] if "--" in args else args) or list(DEFAULT)
    if any(a in ("-h", "--help") for a in what):
        print(_usage())
        return 0
    return one_line_errors(lambda: _print_json(collect(what, overrides)))


def _print_json(figures: dict[str, Any]) -> int:
    """Print `figures` as one indented JSON object; 0."""
    print(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(exit_status(main))
