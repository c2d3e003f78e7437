"""Run a Hydra entry point's job with its config composed once (plain runs only).

`hydra.main` composes a plain run's config twice (once to read `hydra.mode`, once to
run the job), and the one-line error for a bad override needs a composition before
either: three compositions at ~0.13 s of CPU each, on every `bench.run`, `bench.screen`
and `bench.suite` (a resumed finished run and a screen with stores present are waited
for). `run_job_once` composes once, lets the caller add overrides it can only choose
from the composed config (`adjust`: a rare second composition), and runs the job as
Hydra's run mode does: same task name, run directory, job logging and callbacks.

It drives Hydra's internal `Hydra` class (hydra-core 1.3, as `hydra.main` does); the
CLI tests (one-line errors, the job log file, read-only and remote `out`) guard it.
A multirun and any `--` flag (`--cfg`, `--help`, ...) stay with `hydra.main`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from bench.cli_errors import USER_ERRORS
from bench.errors import ConfigError
from bench.names import did_you_mean
from bench.paths import CONF_DIR

_SHELL_UNSAFE = re.compile(r"[^A-Za-z0-9._=,+@%:-]")
"""Characters a shell would read (`[]` globs, quotes, spaces, `$`, `/` a new folder ...)."""


def shell_safe(name: str) -> str:
    """`name` with each character a shell would interpret as `_` (sweep job folders).

    `arms=[raw,rag]` becomes `arms=_raw,rag_`: a job folder is typed or pasted into a
    shell without quoting. Registered as the `shell_safe` resolver the sweep `subdir` of
    conf/config.yaml and conf/suite.yaml uses.
    """
    return _SHELL_UNSAFE.sub("_", str(name))


OmegaConf.register_new_resolver("shell_safe", shell_safe, replace=True)

Adjust = Callable[[DictConfig], list[str]]
"""Extra overrides chosen from a composed config (none: the composition is final)."""


def is_plain_run(args: list[str]) -> bool:
    """No multirun and no `--` flag: the job can be run with one composition."""
    return not any(a in ("-m", "--multirun") or a.startswith("--") for a in args)


def run_job_once(
    entry_file: str,
    config_name: str,
    task: Callable[[DictConfig], None],
    overrides: list[str],
    adjust: Adjust | None = None,
) -> None:
    """Compose `config_name` with `overrides` once and run `task` on it as a Hydra job.

    `entry_file`: the entry point's module file (Hydra names the job and its log file
    after it). A Hydra or OmegaConf error while composing is a bad override: raised as
    a ConfigError (one line); errors inside the job propagate unchanged.
    """
    from hydra._internal.callbacks import Callbacks
    from hydra._internal.hydra import Hydra
    from hydra._internal.utils import create_config_search_path, detect_task_name
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.utils import run_job
    from hydra.types import HydraContext, RunMode

    name = detect_task_name(calling_file=entry_file, calling_module=None)
    hydra = Hydra.create_main_hydra2(name, create_config_search_path(str(CONF_DIR)))

    def compose(extra: list[str], base: list[str] = overrides) -> DictConfig:
        return hydra.compose_config(
            config_name=config_name,
            overrides=[*base, *extra],
            with_log_configuration=True,
            run_mode=RunMode.RUN,
        )

    try:
        cfg = _composed(compose, overrides, adjust)
        cfg.hydra.mode = RunMode.RUN
        callbacks = Callbacks(cfg)
        callbacks.on_run_start(config=cfg, config_name=config_name)
        with no_folder_if_refused(Path(str(cfg.hydra.run.dir))):
            ret = run_job(
                hydra_context=HydraContext(config_loader=hydra.config_loader, callbacks=callbacks),
                task_function=task,
                config=cfg,
                job_dir_key="hydra.run.dir",
                job_subdir_key=None,
                configure_logging=True,
            )
            callbacks.on_run_end(config=cfg, config_name=config_name, job_return=ret)
            _ = ret.return_value  # re-raises the job's exception, as Hydra's run mode does
    finally:
        GlobalHydra.instance().clear()


class _Compose(Protocol):
    """Hydra's compose of the job's config with `base` and `extra` overrides."""

    def __call__(self, extra: list[str], base: list[str] = ..., /) -> DictConfig: ...


def _composed(compose: _Compose, overrides: list[str], adjust: Adjust | None) -> DictConfig:
    """The job's config, `adjust`'s overrides added; a Hydra or OmegaConf error as one line."""
    from hydra.errors import HydraException

    try:
        cfg = compose([])
        extra = adjust(cfg) if adjust is not None else []
        return compose(extra) if extra else cfg
    except (HydraException, OmegaConfBaseException) as exc:
        raise override_error(exc, partial(compose, [], without_key(overrides, exc))) from None


@contextmanager
def no_folder_if_refused(job_dir: Path) -> Iterator[None]:
    """Run the block; when it refuses its input, drop `job_dir` if it made the folder.

    A refusal is a user error or the job's own one-line exit 2; the folder goes only when
    it did not exist before and holds nothing but job logs (`drop_log_only_dir`).
    """
    made = not job_dir.exists()
    try:
        yield
    except (*USER_ERRORS, SystemExit) as exc:
        if made and (not isinstance(exc, SystemExit) or exc.code == 2):
            drop_log_only_dir(job_dir)
        raise


def drop_log_only_dir(job_dir: Path) -> None:
    """Remove `job_dir` when it holds nothing but job logs and unheld run locks.

    Hydra makes the job's folder and its log before the job runs, and a run takes its lock
    (`bench.run.lock`) before it checks its providers, so a command refused in one line
    (a bad setting, a missing key: exit 2) would leave `results/<name>/` behind with a log
    and a lock file: a run folder with no run in it. Called only for a folder this command
    made; anything else in it (a record, a store) or a lock another process holds keeps it.
    """
    from bench.errors import ContainmentError
    from bench.paths import contained, safe_name
    from bench.run.lock import is_lock_name, remove_unheld

    if not job_dir.is_dir() or job_dir.is_symlink():
        return
    entries = list(job_dir.iterdir())
    if any(e.is_symlink() for e in entries):  # only files this command wrote are deleted
        return
    names = [e.name for e in entries]
    logs = [n for n in names if n.endswith(".log") and safe_name(n) == n]
    locks = [n for n in names if is_lock_name(n)]  # the lock module's own names
    if len(logs) + len(locks) != len(names):
        return
    try:  # every path checked to lie inside the folder before anything is deleted
        log_paths = [contained(job_dir / n, job_dir) for n in logs]
        lock_paths = [contained(job_dir / n, job_dir) for n in locks]
    except ContainmentError:  # a link out of the folder: not a file this command wrote
        return
    if not all(p.is_file() for p in [*log_paths, *lock_paths]):
        return
    if lock_paths and not remove_unheld(lock_paths):
        return
    with suppress(OSError):  # another process's file appeared meanwhile: keep the rest
        for path in log_paths:
            path.unlink()
        job_dir.rmdir()


_UNKNOWN_KEY = (
    re.compile(r"Could not override '([^']+)'"),  # Hydra: `a.b=1` where a has no b
    re.compile(r"Key '[^']+' (?:is )?not in [^']*'[^']*'?.*?full_key: (\S+)"),  # OmegaConf
    re.compile(r"Key '([^']+)' is not in struct"),
)


def unknown_key(exc: BaseException) -> str | None:
    """The dotted config key an unknown-key error from Hydra or OmegaConf names, else None."""
    text = " ".join(str(exc).split())  # OmegaConf's `full_key:` tail kept: it names the key
    for pattern in _UNKNOWN_KEY:
        if found := pattern.search(text):
            return found.group(1)
    return None


def override_error(
    exc: BaseException, known_config: Callable[[], Any], prefix: str = "override"
) -> ConfigError:
    """One line for a bad override: an unknown key gets a did-you-mean, never Hydra's "+".

    `known_config()`: a config that holds every valid key (composed without the bad
    override, or the schema), or None. Hydra's advice to append with `+` would only move
    the typo to the schema check. The first segment of the key that does not exist is
    the one named (`answr.max_tokens`: `answr`, did you mean `answer`).
    """
    key = unknown_key(exc)
    if key is None:
        return ConfigError(f"{prefix}: {one_line(exc)}")
    try:
        cfg = known_config()
    except Exception:  # the other overrides fail too: the line still names the key
        cfg = None
    parts = key.split(".")
    for depth in range(len(parts)):
        known = keys_at(cfg, parts[:depth])
        if parts[depth] not in known:
            break
    parent, leaf = ".".join(parts[:depth]), parts[depth]
    where = f"under {parent}" if parent else "at the top level"
    listed = f" known {where}: {', '.join(sorted(known))}" if known else ""
    return ConfigError(
        f"unknown config key {key} (a typo?);{did_you_mean(leaf, known)}{listed}".rstrip(";")
    )


def without_key(overrides: list[str], exc: BaseException) -> list[str]:
    """`overrides` less the one setting the key `exc` names (so the rest can compose)."""
    key = unknown_key(exc)
    return [o for o in overrides if o.lstrip("+~").split("=", 1)[0] != key]


def keys_at(cfg: object, path: list[str]) -> list[str]:
    """The keys of the node at `path` in `cfg` (a DictConfig; [] where there is none)."""
    node = cfg
    for part in path:
        if not isinstance(node, DictConfig) or part not in node:
            return []
        try:
            node = node[part]
        except Exception:  # an interpolation that cannot resolve: no list
            return []
    return [str(k) for k in node if k != "hydra"] if isinstance(node, DictConfig) else []


_OMEGACONF_TAIL = re.compile(
    r"\s+full_key: (\S*)(?:\s+reference_type=\S+)?(?:\s+object_type=\S+)?$"
)


def one_line(exc: BaseException) -> str:
    """An exception's message on one line (Hydra's and OmegaConf's span several).

    OmegaConf's tail (`full_key: a.b reference_type=... object_type=...`) becomes the
    place it names, first: `a.b: Value 'x' ... could not be converted to Integer`.
    """
    text = " ".join(str(exc).split())
    tail = _OMEGACONF_TAIL.search(text)
    if tail is None:
        return text
    head = text[: tail.start()].rstrip()
    return f"{tail.group(1)}: {head}" if tail.group(1) else head
