"""The one boundary where Hydra's composed config becomes typed objects.

Also validates config-group choices on the command line before Hydra runs, so an
unknown dataset, provider or judge is a one-line "did you mean" error.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from bench.arm.guard import load_arm_config
from bench.arm.registry import not_built
from bench.cli_errors import exit_on_errors
from bench.config import RunConfig
from bench.errors import ConfigError
from bench.names import unknown
from bench.paths import CONF_DIR
from bench.remote.uri import is_remote, parse_s3, staging_dir
from bench.run.hydra_job import (
    is_plain_run,
    one_line,
    override_error,
    run_job_once,
    without_key,
)

CHOICE_GROUPS = ("dataset", "provider", "judge", "experiment")


@dataclass(frozen=True)
class ArmSpec:
    """A requested arm: its run-local name, kind and typed options."""

    name: str
    """Run-local arm name (the key in records)."""
    kind: str
    """Registered arm kind (e.g. `raw`, `rag`, `neuromorphic`)."""
    options: Any
    """The arm kind's typed options (e.g. `RagConfig`)."""


def group_options(group: str, extra: list[Path] | None = None) -> list[str]:
    """The option names of a config group (its YAML files in conf/ and in `extra` dirs)."""
    dirs = [CONF_DIR, *(extra or [])]
    return sorted({p.stem for d in dirs for p in (d / group).glob("*.yaml")})


def check_group_overrides(overrides: list[str]) -> None:
    """Reject `dataset=foo` style choices that name no file in conf/<group>/.

    A user's own config folders count too: `hydra.searchpath=[file://<dir>]` and
    `--config-dir <dir>` (docs/live.md: a service YAML kept outside the checkout).
    """
    extra = user_config_dirs(overrides)
    for override in overrides:
        key, sep, value = override.lstrip("+~").partition("=")
        if sep and key in CHOICE_GROUPS and value not in ("", "null"):
            known = group_options(key, extra)
            if value not in known:
                raise unknown(key, value, known, f"{key}={value}")


def user_config_dirs(args: list[str]) -> list[Path]:
    """The folders `hydra.searchpath=[file://...]` and `--config-dir`/`-cd` add."""
    dirs: list[Path] = []
    for i, arg in enumerate(args):
        key, sep, value = arg.lstrip("+~").partition("=")
        if sep and key == "hydra.searchpath":
            entries = value.strip("[]").split(",")
            dirs += [
                Path(e.strip()[len("file://") :])
                for e in entries
                if e.strip().startswith("file://")
            ]
        elif arg in ("--config-dir", "-cd") and i + 1 < len(args):
            dirs.append(Path(args[i + 1]))
        elif arg.startswith("--config-dir="):
            dirs.append(Path(arg.split("=", 1)[1]))
    return dirs


def launch(hydra_entry: Callable[..., None], entry_file: str, job: str | None = None) -> None:
    """Check config-group choices in sys.argv (one-line error, exit 2), then run the job.

    `job` renames Hydra's job, and so its log file `<out>/<job>.log` (default: the
    config's `hydra.job.name`, `run`), for an entry point sharing `conf/config.yaml`.

    A plain run composes its config once (`bench.run.hydra_job`); a multirun or a `--`
    flag goes to Hydra's own entry point, `hydra_entry` (a `hydra.main` function).
    """
    with exit_on_errors():
        args = [otel_shorthand(a) for a in with_plugins(sys.argv[1:])]
        args = with_overrides(args, [f"hydra.job.name={job}"]) if job else args
        check_group_overrides(args)
        if is_plain_run(args):
            run_job_once(entry_file, "config", hydra_entry, args, adjust=job_dir_overrides)
            return
    sys.argv[1:] = args  # a multirun or a `--` flag: Hydra reads the plug-ins' overrides here
    hydra_entry()


def otel_shorthand(override: str) -> str:
    """`otel=true` / `otel=false` as `otel.enabled=...` (`otel` is a table, not a switch)."""
    key, sep, value = override.partition("=")
    if sep and key == "otel" and value.lower() in ("true", "false"):
        return f"otel.enabled={value.lower()}"
    return override


def with_overrides(args: list[str], overrides: list[str]) -> list[str]:
    """`args` with `overrides` just before the first override in it (else last).

    Hydra's argument parser takes the overrides as one run of positionals: ones added
    before a leading flag (`-m a=1`) or after a trailing one (`a=1 -m`) are refused.
    """
    at = next((i for i, a in enumerate(args) if "=" in a and not a.startswith("-")), len(args))
    return [*args[:at], *overrides, *args[at:]]


def with_plugins(args: list[str]) -> list[str]:
    """The plug-in arms' overrides (bench/arm/plugins.py) before the user's `args`."""
    from bench.arm.plugins import plugin_arms, plugin_overrides
    from bench.arm.registry import ARM_KINDS

    added = plugin_overrides(plugin_arms(set(ARM_KINDS)))
    return with_overrides(*merged_searchpath(args, added))


def merged_searchpath(args: list[str], added: list[str]) -> tuple[list[str], list[str]]:
    """(`args`, `added`) with one `hydra.searchpath` holding both sides' folders.

    Hydra keeps only the last `hydra.searchpath=[...]`: the plug-ins' would otherwise
    drop the user's (or the user's the plug-ins'), without a word.
    """
    key = "hydra.searchpath="
    mine = [a for a in args if a.startswith(key)]
    theirs = [a for a in added if a.startswith(key)]
    if not mine or not theirs:
        return args, added
    paths = [p for a in [*theirs, *mine] for p in a[len(key) :].strip("[]").split(",") if p]
    rest = [a for a in args if not a.startswith(key)]
    return rest, [
        f"{key}[{','.join(dict.fromkeys(paths))}]",
        *(a for a in added if a not in theirs),
    ]


def job_dir_overrides(composed: DictConfig) -> list[str]:
    """Where Hydra's job log may go, chosen from the composed `out`.

    A read-only `out` (a finished run) gets `hydra/job_logging=stdout`: Hydra would
    otherwise fail opening its log file there before the run could say "nothing to
    do"; a remote `out` logs into its staging folder, not ./s3:/...
    """
    from bench.run.preflight import check_out

    out = str(composed.out)
    extra = []
    if is_remote(out):
        out = str(staging_dir(parse_s3(out), composed.s3.cache_dir))
        extra.append(f"hydra.run.dir={out}")
    if not check_out(out):
        extra.append("hydra/job_logging=stdout")
    return extra


def load_run_config(cfg: DictConfig) -> RunConfig:
    """Merge the composed config onto the RunConfig schema; unknown keys are errors."""
    try:
        plain = OmegaConf.to_container(cfg, resolve=True)
        assert isinstance(plain, dict)
        plain.pop("hydra", None)
        plain.pop("experiment", None)
        merged = OmegaConf.merge(OmegaConf.structured(RunConfig), plain)
        run = OmegaConf.to_object(merged)
    except OmegaConfBaseException as exc:
        schema = OmegaConf.structured(RunConfig)
        raise override_error(exc, lambda: schema, "config") from None
    assert isinstance(run, RunConfig)
    from bench.run.preflight import check_limits, check_retry_budgets

    check_limits(run.limit)
    check_retry_budgets(run)
    return run


def compose_run_config(overrides: list[str]) -> RunConfig:
    """The run configuration composed as `bench.run` composes it, outside a Hydra job.

    For commands that read the run's configuration without running one (`bench.cleanup`,
    `bench.calibrate`); a bad override or group choice is one ConfigError line.
    """
    from hydra import compose, initialize_config_dir
    from hydra.errors import HydraException

    check_group_overrides(overrides)
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        try:
            composed = compose("config", overrides=overrides)
        except (HydraException, OmegaConfBaseException) as exc:
            rest = without_key(overrides, exc)  # a typo: the keys that do exist, for its line
            raise override_error(exc, lambda: compose("config", overrides=rest)) from None
    return load_run_config(composed)


def arm_specs(run: RunConfig) -> list[ArmSpec]:
    """Typed options for every arm in `run.arms`, in the order requested."""
    specs = []
    known = list(run.arm_options)
    if not run.arms:
        raise ConfigError("arms=[]: no arm requested; e.g. arms=[raw,rag]")
    if len(set(run.arms)) != len(run.arms):
        raise ConfigError(f"arms={run.arms}: an arm is named twice")
    for name in run.arms:
        if name not in run.arm_options:
            not_built(name, f"arms={run.arms}")
            raise unknown("arm", name, known, f"arms={run.arms}")
        options = dict(run.arm_options[name])
        kind = str(options.get("kind", name))
        schema = load_arm_config(kind, f"arm_options.{name}.kind", run.plugins)
        try:
            typed = OmegaConf.to_object(OmegaConf.merge(OmegaConf.structured(schema), options))
        except OmegaConfBaseException as exc:
            raise ConfigError(f"arm_options.{name}: {one_line(exc)}") from None
        specs.append(ArmSpec(name, kind, typed))
    return specs
