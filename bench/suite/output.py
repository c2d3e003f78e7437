"""Write a suite run: report.json, comparable/<arm>.json, runs/<arm>.trec, SUMMARY.md."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.files import write_json_atomic, write_text_atomic
from bench.paths import contained, safe_name
from bench.suite import trec
from bench.suite.config import SuiteConfig
from bench.suite.model import Suite
from bench.suite.runner import ArmRun
from bench.suite.scorecard import comparable, diagnostics, query_key


def write_outputs(
    cfg: SuiteConfig, suites: list[Suite], runs: list[ArmRun], meta: dict[str, Any]
) -> dict[str, Any]:
    """Write every output file; return the report (what report.json holds)."""
    out = Path(cfg.out)
    many = len(suites) > 1
    cutoffs = cfg.suite.cutoffs
    report: dict[str, Any] = {"suite": meta, "cutoffs": cutoffs, "arms": {}}
    qrels = [(query_key(r, many), r.query.relevance) for r in runs[0].rows] if runs else []
    trec.write_lines(contained(out / "runs" / "qrels.txt", out), trec.qrels_lines(qrels))
    for run in runs:
        diag = diagnostics(run, cutoffs)
        report["arms"][run.arm] = diag
        stem = safe_name(run.arm)
        card = comparable(run, cutoffs, meta, diag, many)
        write_json_atomic(contained(out / "comparable" / f"{stem}.json", out), card)
        lines = trec.run_lines(((query_key(r, many), r.ranked) for r in run.rows), stem)
        trec.write_lines(contained(out / "runs" / f"{stem}.trec", out), lines)
    write_json_atomic(contained(out / "report.json", out), report)
    write_text_atomic(contained(out / "SUMMARY.md", out), summary_markdown(report))
    return report


def summary_markdown(report: dict[str, Any]) -> str:
    """SUMMARY.md: one retrieval table per cutoff, then safety and latency."""
    meta = report["suite"]
    lines = [
        f"# Suite {meta['benchmark']} ({meta['kind']}, adapter {meta['adapter']})",
        "",
        f"{meta['queries']} queries over {meta['memories']} memories; "
        f"provider {meta['provider']} (answerer {meta['answerer_model']}, "
        f"embedder {meta['embedder_model']}). Retrieval metrics are macro means over "
        "queries with relevant ids; tiny suites are not leaderboard numbers.",
    ]
    for k in report["cutoffs"]:
        lines += ["", f"## Top {k}", "", "| arm | recall | precision | MRR | nDCG | hit |"]
        lines.append("|---|---:|---:|---:|---:|---:|")
        for arm, diag in report["arms"].items():
            row = diag["retrieval"]["byK"][str(k)]
            cells = " | ".join(_fmt(row[n]) for n in ("recall", "precision", "mrr", "ndcg", "hit"))
            lines.append(f"| {arm} | {cells} |")
    lines += ["", "## Forbidden (stale) hits and latency", ""]
    lines.append(
        "| arm | " + " | ".join(f"forbidden@{k}" for k in report["cutoffs"]) + " | "
        "retrieve avg ms | p95 ms | max ms | ingest s |"
    )
    lines.append("|---|" + "---:|" * (len(report["cutoffs"]) + 4))
    for arm, diag in report["arms"].items():
        rates = [_fmt(diag["safety"]["forbiddenHitRateAtK"][str(k)]) for k in report["cutoffs"]]
        lat = diag["latency"]
        lines.append(
            f"| {arm} | {' | '.join(rates)} | {_fmt(lat['avg'], 1)} | {_fmt(lat['p95'], 1)} | "
            f"{_fmt(lat['max'], 1)} | {diag['ingest_s']:.2f} |"
        )
    lines += _answer_table(report)
    return "\n".join(lines) + "\n"


def _answer_table(report: dict[str, Any]) -> list[str]:
    arms = {a: d["answer"] for a, d in report["arms"].items() if "answer" in d}
    if not arms:
        return []
    label = " (offline answerer)" if report["suite"]["offline"] else ""
    lines = ["", f"## Answers at each cutoff{label}", "", "| arm | K | EM | token F1 | accuracy |"]
    lines.append("|---|---:|---:|---:|---:|")
    for arm, by_k in arms.items():
        for k, row in by_k.items():
            lines.append(
                f"| {arm} | {k} | {_fmt(row['exactMatch'])} | {_fmt(row['tokenF1'])} | "
                f"{_fmt(row['accuracy'])} |"
            )
    return lines


def _fmt(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"
