"""`python -m bench.export RUN_DIR --format inspect --out DIR [--arm NAME ...]`.

Writes one inspect_ai log per arm (`<DIR>/<run>-<arm>.eval`, bench/export/inspect_log.py),
readable with `inspect view --log-dir DIR` and `inspect_ai.log.read_eval_log`; needs the
`inspect` extra. Bad input is one `error:` line on stderr and exit 2.
"""

from __future__ import annotations

from pathlib import Path

from bench.cli_errors import OneLineParser, exit_status, one_line_errors
from bench.errors import ConfigError
from bench.names import did_you_mean
from bench.summarise.load import SummaryError, load_run
from bench.summarise.summary import summarise_records

FORMATS = ("inspect",)
"""The formats `bench.export` writes."""


def parser() -> OneLineParser:
    """The command's arguments."""
    p = OneLineParser(prog="python -m bench.export", description=__doc__.splitlines()[0])
    p.add_argument("run_dir", type=Path, help="a run directory of bench.run")
    p.add_argument("--format", required=True, choices=FORMATS, help="output format")
    p.add_argument("--out", required=True, type=Path, help="folder the logs are written to")
    p.add_argument("--arm", action="append", default=[], help="only this arm (repeatable)")
    return p


def export(argv: list[str] | None = None) -> int:
    """Parse, load the run, write the logs, print their paths."""
    args = parser().parse_args(argv)
    from bench.export.inspect_log import import_inspect, write_inspect_logs

    try:
        run = load_run(args.run_dir)
    except SummaryError as exc:
        raise ConfigError(str(exc)) from None
    import_inspect()
    summary = summarise_records(run)
    known = list(summary.arms)
    for arm in args.arm:
        if arm not in known:
            hint = did_you_mean(arm, known) or f" known: {', '.join(known)}"
            raise ConfigError(f"--arm {arm}: not an arm of {args.run_dir}:{hint}")
    for path in write_inspect_logs(summary, run.records, args.arm or known, args.out):
        print(path)
    return 0


def main(argv: list[str] | None = None) -> int:
    """`export`, with bad input as one line and exit 2."""
    return one_line_errors(lambda: export(argv))


def console() -> None:
    """The `armbench-export` console script (pyproject.toml), as `python -m bench.export`."""
    raise SystemExit(exit_status(main))


if __name__ == "__main__":
    console()
