"""`python -m bench.board RUN_DIR... [--out DIR]`: a leaderboard of runs on one dataset.

Reads each run directory (a `bench.run` run, a `bench.published import` of a published
result, a merged run) with the summariser, makes one entry per arm
(`bench.board.entries`), groups the entries by scale and question set, ranks and pairs
each group, and writes `DIR/board.html` (self-contained, rows sortable) and
`DIR/board.md`. Runs on different datasets (name or file SHA-256) are refused: exit 2
with one line. Standard library only.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bench.board.entries import Entry, entries_of, grouped
from bench.board.render import render_html, render_markdown
from bench.cli_errors import OneLineParser, one_line_errors
from bench.errors import BenchError
from bench.files import write_text_atomic
from bench.summarise.load import load_run
from bench.summarise.summary import summarise_records

BOARD_HTML = "board.html"
BOARD_MD = "board.md"
GROUPS_NOTE = (
    "Entries on different scales or question sets are never ranked together: each group "
    "is ranked within itself and paired with its top entry."
)


class BoardError(BenchError):
    """Runs that cannot share one board (bad input: exit 2)."""


def _parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="python -m bench.board", description=(__doc__ or "").splitlines()[0]
    )
    parser.add_argument(
        "run_dirs",
        nargs="+",
        type=Path,
        metavar="RUN_DIR",
        help="run directories (bench.run, bench.published import or merge)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("board"),
        help="folder for board.html and board.md (default: ./board)",
    )
    return parser


def build_board(run_dirs: list[Path]) -> tuple[str, list[list[Entry]], list[str]]:
    """(dataset, ranked groups, notes) of the runs; BoardError when they cannot share one."""
    entries: list[Entry] = []
    datasets: dict[tuple[str, str | None], list[str]] = {}
    notes: list[str] = []
    for run_dir in run_dirs:
        if not (run_dir / "questions").is_dir():
            raise BoardError(f"{run_dir}: not a run directory (no questions/ folder): pass runs")
        run = load_run(run_dir)
        summary = summarise_records(run)
        sha = summary.meta.dataset.sha256 if summary.meta else None
        datasets.setdefault((summary.dataset, sha), []).append(run_dir.name)
        entries += entries_of(run_dir, summary, run.records)
        if not summary.verdict.publishable:
            notes.append(
                f"{run_dir.name}: publishable false ({len(summary.verdict.reasons)} reasons)"
            )
    if len(datasets) > 1:
        listed = "; ".join(
            f"{n} (sha256 {str(s)[:12]}): {', '.join(r)}" for (n, s), r in datasets.items()
        )
        raise BoardError(f"runs on different datasets: {listed}: pass runs of one dataset")
    ((dataset, _),) = datasets
    notes.insert(0, GROUPS_NOTE)
    return dataset, grouped(entries), notes


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; 2 with a one-line message on bad input."""
    args = _parser().parse_args(argv)
    return one_line_errors(lambda: _write_board(list(args.run_dirs), args.out))


def _write_board(run_dirs: list[Path], out: Path) -> int:
    """Write BOARD_HTML and BOARD_MD under `out`; say what was written."""
    dataset, groups, notes = build_board(run_dirs)
    out.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out / BOARD_HTML, render_html(dataset, groups, notes))
    write_text_atomic(out / BOARD_MD, render_markdown(dataset, groups, notes))
    count = sum(len(g) for g in groups)
    print(f"wrote {out / BOARD_HTML} and {out / BOARD_MD}: {count} entries, {len(groups)} groups")
    return 0
