"""`python -m bench.cleanup RUN_DIR`: delete the namespaces a crashed live run left behind.

Reads `<RUN_DIR>/state.json` (bench.arm.live_state), reconnects to each live arm's
service with the options recorded there, deletes every namespace still listed and
removes it from the file. Prints one line per arm; exit 0 when nothing is left,
2 with one `error:` line when a service cannot be reached or refuses, or when an
entry of the file is not an id the harness would have recorded (checked before any
request is sent: `bench.arm.live_state.checked_namespace`). A namespace the service no
longer has (HTTP 404/410, or an MCP tool saying it is not found) counts as deleted.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bench.arm.live_state import STATE_FILE, NamespaceLedger
from bench.cli_errors import exit_status
from bench.errors import BenchError
from bench.names import load_symbol

CLEANERS = {"http": "arms.http:delete_leftovers", "mcp": "arms.mcp:delete_leftovers"}
"""Arm kind -> `module:function(name, options, ledger) -> int` (lazy: bench never imports arms)."""


def cleanup(run_dir: Path) -> dict[str, int]:
    """Delete every recorded leftover namespace; `{arm: deleted}`."""
    if not (run_dir / STATE_FILE).exists():
        raise BenchError(f"{run_dir}: no {STATE_FILE}; nothing was created by a live arm here")
    ledger = NamespaceLedger(run_dir)
    ledger.namespaces()  # every listed id is checked before any request is sent
    deleted = {}
    for arm in ledger.arms():
        if arm.kind not in CLEANERS:
            raise BenchError(f"{ledger.path}: arm {arm.name} has unknown kind {arm.kind!r}")
        if ledger.namespaces(arm.name):
            deleted[arm.name] = load_symbol(CLEANERS[arm.kind])(arm.name, arm.options, ledger)
        else:
            deleted[arm.name] = 0
    return deleted


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m bench.cleanup", description=__doc__)
    parser.add_argument("run_dir", type=Path)
    args = parser.parse_args(argv)
    try:
        for arm, count in cleanup(args.run_dir).items():
            print(f"{arm}: deleted {count} namespace(s)")
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(exit_status(main))
