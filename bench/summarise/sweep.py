"""`python -m bench.summarise.sweep SWEEP_DIR`: a multirun's paired table (stdlib only).

Options: `--baseline JOB` (pair with that job instead of the first), `--write`
(rewrite `SWEEP_DIR/sweep.md`).

Every job of a `-m` sweep of `bench.run`, `bench.screen` or `bench.suite` leaves one row
file, `<sweep>/sweep-rows/<job>.json` (`SweepRow`): per metric, per arm, the binary
outcome of every question id:

- `bench.run`: `correct` (the run's outcome rule; every question with a known outcome);
- `bench.screen`: `evidence reached` (at least one evidence turn among the retrieved
  sources; questions without evidence, and whole-context arms, have none);
- `bench.suite`: `hit@K` per cutoff (a relevant memory in the top K; abstention queries
  have none).

For each metric and arm the baseline is the first job in sweep order (Hydra's job number,
then the job name) that ran the arm, or the job named by `--baseline`. Every other job
is paired with it **on question id** over the questions both have an outcome for:
b = right only in the job, c = right only in the baseline, exact two-sided McNemar
p = min(1, 2·Σ_{i≤min(b,c)} C(b+c, i) / 2^(b+c)) (`stats.mcnemar_exact_p`), and Holm's
adjustment over every comparison in the table. Jobs with no question in common are
listed as not paired. A `bench.run` job's row also maps each question id to its cluster
(`clusters`: the unit that owns a store, bench/summarise/clustered.py); where both jobs'
questions have one, the clustered test rides along (`clustered_paired`: exact sign-flip
p over clusters, Holm over the table as a second family, cluster bootstrap 95% CI).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.cli_errors import one_line_errors
from bench.files import write_text_atomic
from bench.summarise.clustered import ClusteredTest, clustered_paired
from bench.summarise.load import SummaryError
from bench.summarise.model import SWEEP_ROWS
from bench.summarise.stats import holm, mcnemar_exact_p
from bench.untrusted import read_json_object

SWEEP_TABLE = "sweep.md"
"""The paired sweep table, rewritten after every job."""


@dataclass
class SweepRow:
    """One job of a sweep: per metric, arm and question id, the binary outcome."""

    job: str
    """The job's directory name (its overrides)."""
    num: int
    """Hydra's job number (sweep order)."""
    tool: str
    """`run`, `screen` or `suite`."""
    outcomes: dict[str, dict[str, dict[str, bool]]] = field(default_factory=dict)
    """metric -> arm -> question id -> outcome."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Tool-specific headline values (a suite's recall per cutoff)."""
    clusters: dict[str, str] = field(default_factory=dict)
    """Question id -> cluster (the unit owning a store; `bench.run` jobs); empty: unknown."""


@dataclass
class Comparison:
    """One job's arm against the baseline job's same arm, paired on question id."""

    metric: str
    """The outcome compared."""
    arm: str
    """The arm."""
    job: str
    """The compared job."""
    baseline: str
    """The baseline job."""
    n: int
    """Questions both jobs have an outcome for."""
    rate: float | None
    """The job's share of true outcomes over those questions."""
    base_rate: float | None
    """The baseline's share over the same questions."""
    job_only: int
    """Questions right only in the job."""
    base_only: int
    """Questions right only in the baseline."""
    p: float | None
    """Exact McNemar p (None when not paired)."""
    p_holm: float | None = None
    """Holm-adjusted over every comparison of the table."""
    clustered: ClusteredTest | None = None
    """The clustered test (job − baseline; clusters as the sample); None when unknown."""


def read_rows(sweep_dir: Path) -> list[SweepRow]:
    """Every job's row, in sweep order (job number, then name)."""
    rows = []
    for path in sorted((sweep_dir / SWEEP_ROWS).glob("*.json")):
        data = read_json_object(path, fix="re-run that sweep job")
        rows.append(
            SweepRow(
                job=str(data["job"]),
                num=int(data.get("num", 0)),
                tool=str(data.get("tool", "")),
                outcomes=data.get("outcomes") or {},
                extra=data.get("extra") or {},
                clusters=_clusters(data.get("clusters")),
            )
        )
    return sorted(rows, key=lambda r: (r.num, r.job))


def _clusters(value: object) -> dict[str, str]:
    """A row's `clusters` (question id -> cluster); ValueError unless strings to strings."""
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ValueError("clusters is not an object of question id -> cluster name")
    return value


def compare(rows: list[SweepRow], baseline: str | None = None) -> list[Comparison]:
    """Every (metric, arm, job) against its baseline job, Holm-adjusted as one family."""
    out: list[Comparison] = []
    metrics = list(dict.fromkeys(m for r in rows for m in r.outcomes))
    for metric in metrics:
        arms = list(dict.fromkeys(a for r in rows for a in r.outcomes.get(metric, {})))
        for arm in arms:
            ran = [r for r in rows if arm in r.outcomes.get(metric, {})]
            base = next((r for r in ran if r.job == baseline), ran[0])
            base_outcomes = base.outcomes[metric][arm]
            for row in ran:
                out.append(_pair(metric, arm, row, base, base_outcomes))
    tested = [c for c in out if c.p is not None and c.job != c.baseline]
    for comparison, adjusted in zip(tested, holm([c.p or 1.0 for c in tested]), strict=True):
        comparison.p_holm = adjusted
    clustered = [c.clustered for c in tested if c.clustered is not None]
    for test, adjusted in zip(clustered, holm([t.p for t in clustered]), strict=True):
        test.p_holm = adjusted
    return out


def _pair(
    metric: str, arm: str, row: SweepRow, base: SweepRow, base_outcomes: dict[str, bool]
) -> Comparison:
    mine = row.outcomes[metric][arm]
    shared = sorted(set(mine) & set(base_outcomes))
    n = len(shared)
    job_only = sum(1 for q in shared if mine[q] and not base_outcomes[q])
    base_only = sum(1 for q in shared if base_outcomes[q] and not mine[q])
    rate = sum(mine[q] for q in shared) / n if n else None
    base_rate = sum(base_outcomes[q] for q in shared) / n if n else None
    p = mcnemar_exact_p(job_only, base_only) if n and row.job != base.job else None
    made = Comparison(metric, arm, row.job, base.job, n, rate, base_rate, job_only, base_only, p)
    clusters = row.clusters or base.clusters
    if p is not None and all(q in clusters for q in shared):
        pairs = [(clusters[q], base_outcomes[q], mine[q]) for q in shared]
        made.clustered = clustered_paired(pairs)
    return made


def render(rows: list[SweepRow], baseline: str | None = None) -> str:
    """sweep.md: a suite's recall table (when the jobs are suites), then the paired tables."""
    lines = ["# Sweep", ""]
    recall = _recall_table(rows)
    if recall:
        lines += [*recall, ""]
    comparisons = compare(rows, baseline)
    lines.append(
        "Each job against the baseline job (first in sweep order unless `--baseline`), same "
        "arm, paired on question id: exact McNemar p, Holm-adjusted over the whole table; "
        "clustered p: exact sign-flip over conversations (K of them; `bench.run` jobs), "
        "its bootstrap 95% CI of job − baseline, Holm-adjusted as a second family. "
        "The per-question p generalises to these questions, the clustered p to "
        "conversations like these (it cannot go below 2/2^K)."
    )
    for metric in dict.fromkeys(c.metric for c in comparisons):
        lines += ["", f"## {metric}", ""]
        lines.append(
            "| job | arm | n paired | rate | baseline rate | job only | baseline only "
            "| p | p (Holm) | K | p (clustered) | p (cl. Holm) | 95% CI (clustered) |"
        )
        lines.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for c in (c for c in comparisons if c.metric == metric):
            lines.append(_line(c))
    return "\n".join(lines) + "\n"


def _line(c: Comparison) -> str:
    if c.job == c.baseline:
        return f"| {c.job} | {c.arm} | {c.n} | {_pct(c.rate)} | (baseline) | | | | | | | | |"
    if not c.n:
        return f"| {c.job} | {c.arm} | 0 | not paired: no question in common | | | | | | | | | |"
    return (
        f"| {c.job} | {c.arm} | {c.n} | {_pct(c.rate)} | {_pct(c.base_rate)} | {c.job_only} | "
        f"{c.base_only} | {_p(c.p)} | {_p(c.p_holm)} | {_clustered_cells(c.clustered)} |"
    )


def _clustered_cells(t: ClusteredTest | None) -> str:
    """K, clustered p, its Holm adjustment and the bootstrap interval (points), or blanks."""
    if t is None:
        return " | | | "
    ci = "" if t.ci95 is None else f"[{100 * t.ci95[0]:+.1f}, {100 * t.ci95[1]:+.1f}]"
    return f"{t.k} | {_p(t.p)} | {_p(t.p_holm)} | {ci}"


def _recall_table(rows: list[SweepRow]) -> list[str]:
    """One line per suite job and arm with recall at every cutoff (suite sweeps only)."""
    suites = [r for r in rows if "recall" in r.extra]
    if not suites:
        return []
    cutoffs = suites[0].extra["cutoffs"]
    head = "| job | arm | " + " | ".join(f"recall@{k}" for k in cutoffs) + " |"
    lines = [head, "|---|---|" + "---:|" * len(cutoffs)]
    for row in suites:
        for arm, recalls in row.extra["recall"].items():
            cells = " | ".join(
                "n/a" if recalls.get(str(k)) is None else f"{recalls[str(k)]:.3f}" for k in cutoffs
            )
            lines.append(f"| {row.job} | {arm} | {cells} |")
    return lines


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def _p(value: float | None) -> str:
    if value is None:
        return ""
    return f"{value:.2g}" if value < 0.01 else f"{value:.3f}"


def main(argv: list[str] | None = None) -> int:
    """Print (and with `--write` rewrite) a sweep's paired table; 2 on bad input."""
    parser = argparse.ArgumentParser(prog="python -m bench.summarise.sweep")
    parser.add_argument("sweep_dir", type=Path, help="the multirun's out= folder")
    parser.add_argument("--baseline", help="job (directory name) every other job is paired with")
    parser.add_argument("--write", action="store_true", help=f"rewrite SWEEP_DIR/{SWEEP_TABLE}")
    args = parser.parse_args(argv)
    return one_line_errors(lambda: _table(args))


def _table(args: argparse.Namespace) -> int:
    """Read the rows, print the table (and `--write` it); 0."""
    try:
        rows = read_rows(args.sweep_dir)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SummaryError(
            f"{args.sweep_dir}/{SWEEP_ROWS}: unreadable ({exc}); re-run the sweep"
        ) from None
    if not rows:
        raise SummaryError(
            f"{args.sweep_dir}: no {SWEEP_ROWS}/*.json; pass the out= folder of a -m sweep"
        )
    if args.baseline and args.baseline not in {r.job for r in rows}:
        jobs = ", ".join(r.job for r in rows)
        raise SummaryError(f"--baseline {args.baseline}: no such job; use one of {jobs}")
    text = render(rows, args.baseline)
    print(text, end="")
    if args.write:
        write_text_atomic(args.sweep_dir / SWEEP_TABLE, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
