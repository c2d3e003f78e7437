"""`armbench run DATASET [flags]` (also `python -m bench.quick run ...`).

Translates the flags (and a `.env` file's `ANSWER_*` / `EVAL_*`) into Hydra overrides
(bench/quick/flags.py), prints the equivalent `python -m bench.run ...` command, then runs
it and returns its exit status. Bad flags are one `error:` line and exit 2.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
from pathlib import Path

from bench.cli_errors import exit_status, one_line_errors
from bench.quick.envfile import read_env_file
from bench.quick.flags import ENV_FLAGS, parser, to_overrides


def with_env_file(args: argparse.Namespace) -> dict[str, str]:
    """Fill flags from the env file; return the names it sets for the run's environment."""
    path = Path(args.env_file)
    explicit = args.env_file != ".env"
    if not path.exists() and not explicit:
        return {}
    values = read_env_file(path)
    for name, attr in ENV_FLAGS.items():
        if getattr(args, attr) is None and values.get(name):
            setattr(args, attr, values[name])
    return {k: v for k, v in values.items() if k not in ENV_FLAGS}


def quick(argv: list[str] | None = None, prog: str = "python -m bench.quick") -> int:
    """Parse, translate, print the command, run it."""
    given = list(sys.argv[1:] if argv is None else argv)
    cut = given.index("--") if "--" in given else len(given)  # argparse drops `--` badly
    args = parser(prog).parse_args(given[:cut])
    args.overrides += given[cut + 1 :]
    extra_env = with_env_file(args)
    overrides = to_overrides(args)
    command = ["python", "-m", "bench.run", *overrides]
    print(shlex.join(command), file=sys.stderr, flush=True)
    if args.print_only:
        return 0
    env = {**extra_env, **os.environ}  # the environment wins over the file
    return subprocess.run([sys.executable, *command[1:]], env=env, check=False).returncode


def main(argv: list[str] | None = None, prog: str = "python -m bench.quick") -> int:
    """`quick`, with bad input as one line and exit 2."""
    return one_line_errors(lambda: quick(argv, prog))


def console() -> None:
    """Entry point of the `armbench` console script."""
    raise SystemExit(exit_status(lambda: main(prog="armbench")))


if __name__ == "__main__":
    raise SystemExit(exit_status(main))
