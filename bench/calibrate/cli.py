"""`python -m bench.calibrate [overrides]`: every judge's acceptance on answers of known truth.

Overrides are the run's (`dataset=`, `judge=`, `provider=`, `judges.0.endpoint.model=`,
`judges.0.runs=`, `scoring.f1_threshold=` ...) plus the calibration's own:

- `calibrate.sets=gold,other_gold,shifted_date,trap,not_mentioned` (the default: all);
- `calibrate.answers=<file>[,<file>...]`: known-wrong answers in the EverMemOS
  eval_results.json shape (their published verdicts are reported as `published:<stem>`);
- `calibrate.out=<dir>` (default `outputs/calibration-<dataset>`): where
  `calibration.json`, `CALIBRATION.md` and the judges' response cache go; a run
  directory there makes its summary show its judge's calibration;
- `calibrate.max_items=N`: the first N answers of each set only (a cheap LLM check);
- `calibrate.cache=readwrite` (default; `off`, `read`, `write`): the judges' response
  cache, whatever the provider preset says (the offline preset turns it off), so a
  rerun of a calibration asks no server.

The offline rule (`f1>=<scoring.f1_threshold>`) is always calibrated; each configured
LLM judge too, through the same judge and cache code as a run (a rerun is free).
Exit 0; 1 when some LLM verdicts are missing (errors); 2 with one line on bad input.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.calibrate.sets import DERIVED, AnswerSet
from bench.cli_errors import one_line_errors
from bench.errors import ConfigError

if TYPE_CHECKING:
    from bench.calibrate.measure import Verdicts
    from bench.judge.protocol import Judge

PREFIX = "calibrate."
FORMAT = "armbench-calibration/1"


@dataclass
class Options:
    """The calibration's own settings (`calibrate.*` overrides)."""

    sets: list[str] = field(default_factory=lambda: list(DERIVED))
    """Derived answer sets to build (`bench.calibrate.sets.DERIVED`)."""
    answers: list[str] = field(default_factory=list)
    """Known-wrong answer files in the EverMemOS eval_results.json shape."""
    out: str | None = None
    """Output folder; None: `outputs/calibration-<dataset>`."""
    max_items: int | None = None
    """Only the first N answers of each set; None: all."""
    cache: str = "readwrite"
    """The judges' response-cache mode."""


def _split(args: list[str]) -> tuple[Options, list[str]]:
    """`calibrate.*` overrides parsed; the rest are the run's Hydra overrides."""
    opts, rest = Options(), []
    for arg in args:
        key, sep, value = arg.partition("=")
        if not key.startswith(PREFIX):
            rest.append(arg)
            continue
        name = key[len(PREFIX) :]
        items = [v.strip() for v in value.strip("[]").split(",") if v.strip()]
        if not sep or name not in ("sets", "answers", "out", "max_items", "cache"):
            raise ConfigError(
                f"{arg}: unknown; use calibrate.sets=, .answers=, .out=, .max_items=, .cache="
            )
        if name == "sets":
            bad = [s for s in items if s not in DERIVED]
            if bad:
                raise ConfigError(f"{arg}: unknown set {bad[0]}; use {', '.join(DERIVED)}")
            opts.sets = items
        elif name == "answers":
            opts.answers = items
        elif name == "out":
            opts.out = value
        elif name == "cache":
            opts.cache = value
        elif not value.isdigit() or int(value) < 1:
            raise ConfigError(f"{arg}: must be a positive integer")
        else:
            opts.max_items = int(value)
    return opts, rest


def _check_answer_files(paths: list[str]) -> None:
    """ConfigError (one line) for a `calibrate.answers` file that is not there."""
    for path in paths:
        if not Path(path).expanduser().is_file():
            raise ConfigError(
                f"calibrate.answers={path}: no such file: give an answer file in the "
                "EverMemOS eval_results.json shape (e.g. $BENCH_DATA_DIR/locomo-audit/"
                "ap-v2-vague-wrong.json, docs/calibration.md)"
            )


def _run_config(overrides: list[str]) -> Any:
    """The run configuration composed as `bench.run` composes it (one line on error)."""
    from bench.run.settings import compose_run_config

    return compose_run_config(overrides)


def _capped(sets: list[AnswerSet], cap: int | None) -> list[AnswerSet]:
    if cap is None:
        return sets
    return [AnswerSet(s.name, s.truth, s.items[:cap], s.source) for s in sets]


def _judge_entries(
    judges: dict[str, list[Judge]], rule: str, published: list[str]
) -> list[dict[str, Any]]:
    from bench.judge.judge_set import judge_meta

    entries: list[dict[str, Any]] = [{"name": rule, "kind": "rule"}]
    entries += [{"name": p, "kind": "published"} for p in published]
    for runs in judges.values():
        (meta,) = judge_meta(runs)
        entries.append(
            {"name": meta.judge_id, **{k: v for k, v in vars(meta).items() if k != "judge_id"}}
        )
    return entries


def calibrate_config(cfg: Any, opts: Options, problems: list[str]) -> dict[str, Any]:
    """Build sets and judges from the configuration, measure, return calibration.json."""
    from bench.calibrate.evermemos import read_answer_file
    from bench.calibrate.measure import calibrate, f1_judge, llm_judge, published_judge
    from bench.calibrate.sets import derived_sets
    from bench.judge.judge_set import build_judges
    from bench.loaders import load_dataset
    from bench.providers.factory import build_providers
    from bench.scoring.judge_runs import split_run_id

    dataset = load_dataset(cfg.dataset)
    sets = derived_sets(dataset, opts.sets)
    rule, rule_verdicts = f1_judge(cfg.scoring.f1_threshold)
    judges: dict[str, Verdicts] = {rule: rule_verdicts}
    only: dict[str, str] = {}
    for path in opts.answers:
        answer_file = read_answer_file(Path(path), dataset)
        sets.append(answer_file.answers)
        name = f"published:{answer_file.answers.name}"
        judges[name], only[name] = published_judge(answer_file.published), answer_file.answers.name
    sets = _capped(sets, opts.max_items)
    out = Path(opts.out or f"outputs/calibration-{dataset.name}")
    cfg.provider.cache.mode = opts.cache
    providers = build_providers(cfg.provider, out, answerer=False)
    try:
        built: dict[str, list[Judge]] = {}
        for judge in build_judges(cfg.judges, providers, cfg.scoring.judge_attempts):
            built.setdefault(split_run_id(judge.judge_id)[0], []).append(judge)
        workers = max([j.endpoint.concurrency for j in cfg.judges] or [1])
        for name, runs in built.items():
            judges[name] = llm_judge(runs, workers, problems)
        cells = calibrate(judges, sets, only)
    finally:
        providers.close()
    return {
        "format": FORMAT,
        "dataset": {"name": dataset.name, "sha256": dataset.sha256},
        "judges": _judge_entries(built, rule, [j for j in judges if j.startswith("published:")]),
        "sets": [
            {"name": s.name, "truth": s.truth, "source": s.source, "n": len(s.items)} for s in sets
        ],
        "cells": [c.to_json() for c in cells],
    }


def write_outputs(data: dict[str, Any], out: Path, locomo_style: bool) -> str:
    """Write calibration.json and CALIBRATION.md into `out`; return the Markdown."""
    from bench.files import write_json_atomic, write_text_atomic
    from bench.paths import contained
    from bench.summarise.calibration_view import CALIBRATION_FILE, render_calibration

    lines = [f"# Judge calibration: {data['dataset']['name']}", ""]
    lines += ["Acceptance rate [Wilson 95%] (n) per judge, answer set and group. On a wrong set"]
    lines += ["it is the false-accept rate; on a right set 1 - rate is the false-reject rate."]
    text = "\n".join([*lines, *render_calibration(data, locomo_style)]) + "\n"
    out.mkdir(parents=True, exist_ok=True)
    write_json_atomic(contained(out / CALIBRATION_FILE, out), data)
    write_text_atomic(contained(out / "CALIBRATION.md", out), text)
    return text


def _interruptible(
    calibrate: Callable[[Any, Options, list[str]], dict[str, Any]],
    cfg: Any,
    opts: Options,
    problems: list[str],
) -> dict[str, Any]:
    """`calibrate(cfg, opts, problems)`; Ctrl-C (SIGINT) or SIGTERM ends it within seconds.

    Judge calls run in threads that a plain KeyboardInterrupt would wait for (each up to
    its timeout and retries): `bench.run.interrupt` leaves with one line, exit 130/143.
    Nothing is written before the end; verdicts already asked stay in the cache.
    """
    from bench.run.interrupt import interruptible

    def line(signum: int) -> str:
        return (
            f"interrupted by {signal.Signals(signum).name}: calibration stopped, no output "
            "written; re-run the same command (verdicts already asked come from the cache)"
        )

    with interruptible(Path("."), line=line):
        return calibrate(cfg, opts, problems)


def main(argv: list[str]) -> int:
    """The command; returns its exit status."""
    import logging

    for noisy in ("httpx", "httpx2", "openai"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    if any(a in ("-h", "--help") for a in argv):
        print("usage: python -m bench.calibrate [calibrate.*=...] [run overrides ...]\n")
        print(__doc__)
        return 0
    return one_line_errors(lambda: _calibrate(argv))


def _calibrate(argv: list[str]) -> int:
    """Calibrate, write and print the outputs; 1 when judge calls gave no verdict."""
    opts, overrides = _split(argv)
    _check_answer_files(opts.answers)  # before the dataset loads (half a minute)
    cfg = _run_config(overrides)
    problems: list[str] = []
    data = _interruptible(calibrate_config, cfg, opts, problems)
    out = Path(opts.out or f"outputs/calibration-{data['dataset']['name']}")
    text = write_outputs(data, out, cfg.dataset.loader == "locomo")
    print(text, end="")
    if problems:
        print(
            f"error: {len(problems)} judge calls gave no verdict (first: {problems[0]}); "
            "re-run the same command to retry them",
            file=sys.stderr,
        )
        return 1
    return 0
