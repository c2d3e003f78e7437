"""`python -m bench.summarise RUN_DIR`: paired tables from per-question JSON, stdlib only.

Reads `RUN_DIR/questions/*.json` (and `run.json` when present), computes a typed
`Summary` (`summary.py`: accuracy with Wilson intervals on both denominators, official
F1, latency, per-category breakdowns, exact McNemar tests between arms and against a
baseline run, judge agreement) and renders it as text, JSON or the comparable export.

Imports nothing outside the standard library (a test runs it where numpy, scipy and
pandas cannot be imported).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from bench.cli_errors import one_line_errors
from bench.files import write_text_atomic
from bench.summarise.equivalence import DEFAULT_MARGIN
from bench.summarise.load import LoadedRun, SummaryError, load_run
from bench.summarise.model import LABEL_SCHEMES, Summary
from bench.summarise.render import render_markdown, render_text
from bench.summarise.render_json import summary_to_json
from bench.summarise.summary import summarise_records


def _local(arg: str) -> Path:
    """A run folder on this machine; `s3://...` is fetched first (boto3, imported only then)."""
    if not arg.startswith("s3://"):
        return Path(arg)
    from bench.remote.fetch import fetch_run

    return fetch_run(arg)


def _upload(arg: str, names: list[str]) -> None:
    """Upload files `--write` put in the local copy of an `s3://` run."""
    from bench.remote.fetch import upload_written

    upload_written(arg, names)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bench.summarise", description=__doc__.splitlines()[0] if __doc__ else ""
    )
    parser.add_argument(
        "run_dir", help="run directory holding questions/*.json, or s3://bucket/prefix ([s3] extra)"
    )
    parser.add_argument("--baseline", help="another run of the same arms to pair with")
    parser.add_argument(
        "--baseline-arm",
        help="pair every arm with this baseline arm (default: the baseline's one imported arm, "
        "else each arm with its namesake)",
    )
    parser.add_argument(
        "--margin",
        type=float,
        default=100 * DEFAULT_MARGIN,
        help="equivalence margin δ in accuracy points (default 2)",
    )
    parser.add_argument("--json", action="store_true", help="same as --format json")
    parser.add_argument("--labels", choices=sorted(LABEL_SCHEMES), default="official")
    parser.add_argument("--format", choices=("text", "json", "comparable"), default=None)
    parser.add_argument(
        "--write", action="store_true", help="also write RUN_DIR/SUMMARY.md (and comparable.json)"
    )
    return parser


def _summary_of(args: argparse.Namespace, run: LoadedRun, base: LoadedRun | None) -> Summary:
    """`summarise_records` with the command line's options (the margin checked first)."""
    if not 0 < args.margin < 100:
        raise SummaryError(f"--margin {args.margin}: must be between 0 and 100 points")
    return summarise_records(
        run,
        baseline=base,
        labels=args.labels,
        margin=args.margin / 100,
        baseline_arm=args.baseline_arm,
    )


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; returns the exit status (2 with a one-line message on bad input)."""
    args = _parser().parse_args(argv)
    return one_line_errors(lambda: _summarise(args))


def _summarise(args: argparse.Namespace) -> int:
    """Load, summarise and print the run (and `--write` its files); 0."""
    if args.json and args.format not in (None, "json"):
        raise SummaryError(f"--json conflicts with --format {args.format}")
    fmt = args.format or ("json" if args.json else "text")
    run = load_run(_local(args.run_dir))
    base = load_run(_local(args.baseline)) if args.baseline else None
    summary = _summary_of(args, run, base)
    text = _render(summary, run, fmt)
    print(text)
    if args.write:
        _write(args, run, summary, text, fmt)
    return 0


def _render(summary: Summary, run: LoadedRun, fmt: str) -> str:
    """The summary as `fmt`: text tables, JSON, or the comparable export."""
    if fmt == "json":
        return json.dumps(summary_to_json(summary), indent=1, allow_nan=False)
    if fmt == "comparable":
        from bench.summarise.comparable import comparable_export

        return json.dumps(comparable_export(summary, run.records), indent=1, allow_nan=False)
    return render_text(summary)


def _write(args: argparse.Namespace, run: LoadedRun, summary: Summary, text: str, fmt: str) -> None:
    """`--write`: SUMMARY.md (and comparable.json) in the run, uploaded for `s3://`."""
    write_text_atomic(run.run_dir / "SUMMARY.md", render_markdown(summary))
    if fmt == "comparable":
        write_text_atomic(run.run_dir / "comparable.json", text + "\n")
    if args.run_dir.startswith("s3://"):
        _upload(args.run_dir, ["SUMMARY.md", "comparable.json"])
