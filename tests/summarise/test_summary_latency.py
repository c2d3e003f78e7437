"""The summary reports each arm's retrieval latency (`retrieve_ms`) beside answering's."""

from __future__ import annotations

import json
from pathlib import Path

from bench.records import iter_records
from bench.summarise import summarise_run
from bench.summarise.render import render_text
from bench.summarise.render_json import summary_to_json
from bench.summarise.stats import percentile

RUN = Path(__file__).resolve().parents[2] / "results" / "smoke-offline-v0.3.0"


def test_retrieval_latency_per_arm_in_json_and_markdown() -> None:
    summary = summarise_run(RUN)
    results = [r.arms["rag"] for r in iter_records(RUN) if "rag" in r.arms]
    values = sorted(
        float(x.retrieve_ms) for x in results if x.status == "ok" and x.retrieve_ms is not None
    )
    assert values  # the committed run records it
    stats = summary.arms["rag"].retrieve_ms
    assert stats["p50"] == percentile(values, 50) and stats["mean"] == sum(values) / len(values)
    assert summary_to_json(summary)["arms"]["rag"]["retrieve_ms"] == stats
    text = render_text(summary)
    assert f"| rag: retrieval | {stats['p50']:.1f} |" in text


def test_no_retrieval_row_when_no_result_records_it(tmp_path: Path) -> None:
    from tests.report.test_frame import make_run

    run = make_run(tmp_path)
    for path in (run / "questions").glob("*.json"):
        record = json.loads(path.read_text(encoding="utf-8"))
        for result in record["arms"].values():
            result.pop("retrieve_ms", None)
        path.write_text(json.dumps(record), encoding="utf-8")
    summary = summarise_run(run)
    assert all(not a.retrieve_ms for a in summary.arms.values())
    assert ": retrieval |" not in render_text(summary)
    assert all("retrieve_ms" not in a for a in summary_to_json(summary)["arms"].values())
