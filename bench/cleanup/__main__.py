"""`python -m bench.cleanup RUN_DIR [overrides]`: delete the namespaces a crashed live run left.

Reads `<RUN_DIR>/state.json` (bench.arm.live_state): what the run created (the run's
nonce, each live arm's name and kind, the namespaces with the names they were created
under), never how to reach or authorise. The service URL, the token variable and the
request templates come from this command's configuration, composed as `bench.run`
composes it (`conf/config.yaml` plus the overrides, e.g.
`arm_options.http.base_url=http://127.0.0.1:9000 arm_options.http.token_env=MY_TOKEN`),
the same as a resume of the run. Options that a `state.json` of an earlier version
recorded are ignored (said in one line), never used.

Before anything is deleted, every listed namespace is checked with the service to be
one this run created (arms/live_owner.py: its recorded name echoes the run's nonce and
the service lists it under that name); anything else is refused in one `error:` line
and nothing of that arm is deleted. A namespace the service no longer lists (or answers
404/410 for, or an MCP tool says is not found) counts as deleted. Prints one line per
arm; exit 0 when nothing is left, 2 with one `error:` line when a service cannot be
reached or refuses, when the configuration points an arm at another endpoint than the
run used, or when an entry of the file is not an id the harness would have recorded
(checked before any request is sent: `bench.arm.live_state.checked_namespace`).
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from bench.arm.live_state import STATE_FILE, LiveArm, NamespaceLedger
from bench.cli_errors import exit_status, one_line_errors
from bench.errors import BenchError, ConfigError
from bench.names import load_symbol

CLEANERS = {"http": "arms.http:delete_leftovers", "mcp": "arms.mcp:delete_leftovers"}
"""Arm kind -> `module:function(name, options, ledger) -> int` (lazy: bench never imports arms)."""


def _options(arms: list[LiveArm], overrides: list[str]) -> dict[str, object]:
    """Each arm's typed options from the command's configuration (as a resume gets them)."""
    from bench.run.settings import arm_specs, compose_run_config

    run = compose_run_config(overrides)
    specs = arm_specs(replace(run, arms=[arm.name for arm in arms]))
    options = {}
    for arm, spec in zip(arms, specs, strict=True):
        if spec.kind != arm.kind:
            raise ConfigError(
                f"arm_options.{arm.name}.kind={spec.kind}: the run's arm {arm.name} was "
                f"{arm.kind!r}; pass the run's arm options"
            )
        options[arm.name] = spec.options
    return options


def cleanup(run_dir: Path, overrides: list[str]) -> dict[str, int]:
    """Delete every recorded leftover namespace this run created; `{arm: deleted}`."""
    if not (run_dir / STATE_FILE).exists():
        raise BenchError(f"{run_dir}: no {STATE_FILE}; nothing was created by a live arm here")
    ledger = NamespaceLedger(run_dir)
    ledger.namespaces()  # every listed id is checked before any request is sent
    arms = ledger.arms()
    for arm in arms:
        if arm.kind not in CLEANERS:
            raise BenchError(f"{ledger.path}: arm {arm.name} has unknown kind {arm.kind!r}")
        if arm.legacy_options:
            print(
                f"note: {ledger.path}: arm {arm.name}'s recorded options (URL, token "
                "variable, request templates) are ignored; this command's are used"
            )
    busy = [arm for arm in arms if ledger.namespaces(arm.name)]
    options = _options(busy, overrides) if busy else {}
    deleted = {arm.name: 0 for arm in arms}
    for arm in busy:
        deleted[arm.name] = load_symbol(CLEANERS[arm.kind])(arm.name, options[arm.name], ledger)
    return deleted


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.cleanup",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("overrides", nargs="*", help="the run's overrides (arm_options.*)")
    args = parser.parse_args(argv)
    return one_line_errors(lambda: _clean(args.run_dir, args.overrides))


def _clean(run_dir: Path, overrides: list[str]) -> int:
    """`cleanup` and one line per arm; 0."""
    for arm, count in cleanup(run_dir, overrides).items():
        print(f"{arm}: deleted {count} namespace(s)")
    return 0


def console() -> None:
    """The `armbench-cleanup` console script (pyproject.toml), as `python -m bench.cleanup`."""
    raise SystemExit(exit_status(main))


if __name__ == "__main__":
    console()
