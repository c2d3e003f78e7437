"""What a finished `bench.dev.llm_smoke` run says: answers, verdicts, extraction, flags.

Read from the run's records, `run.json` and the extracting arms' stores.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class RunStats:
    """What one finished smoke run's records and `run.json` say."""

    errors: int
    """Arm results in `error`."""
    answers: int
    """Arm results with an answer."""
    within_cap: int
    """Answers whose reported completion tokens stayed below the answerer's `max_tokens`
    (an answer that used all of them was cut off)."""
    judged: int
    """Answers the LLM judge gave a parseable verdict for."""
    exchanges: int
    """Exchanges the LLM extractor was asked about, over every arm and conversation."""
    extraction_failed: int
    """Of those, the ones that failed."""
    facts: int
    """Facts stored."""
    exchanges_with_facts: int
    """Exchanges at least one stored fact came from (distinct turns in each store's
    archive), over every arm and conversation."""
    http_requests: int
    """HTTP requests in `run.json`'s accounting (it adds up every invocation on the folder)."""


def run_stats(out: Path, max_tokens: int, judge_id: str = "llm") -> RunStats:
    """Count answers, verdicts and extraction health of a finished run."""
    meta: dict[str, Any] = json.loads((out / "run.json").read_text())
    requests = int(meta["accounting"]["total"]["http_requests"])
    stats = RunStats(0, 0, 0, 0, 0, 0, 0, exchanges_with_facts(out / "stores"), requests)
    for path in sorted((out / "questions").glob("*.json")):
        for result in json.loads(path.read_text())["arms"].values():
            stats.errors += int(result["status"] == "error")
            if result.get("answer") is None:
                continue
            stats.answers += 1
            completion = result.get("usage", {}).get("completion_tokens")
            stats.within_cap += int(completion is not None and completion < max_tokens)
            judgement = result.get("judgements", {}).get(judge_id, {})
            stats.judged += int(judgement.get("status") == "ok")
    for conversations in (meta.get("extraction_health") or {}).values():
        for health in conversations.values():
            stats.exchanges += int(health["exchanges"])
            stats.extraction_failed += int(health["failed"])
            stats.facts += int(health["facts"])
    return stats


def exchanges_with_facts(stores: Path) -> int:
    """Distinct turns with a stored fact, summed over the extracting arms' archives."""
    count = 0
    for archive in sorted(stores.glob("*/*/archive.sqlite")):
        with closing(sqlite3.connect(f"{archive.as_uri()}?mode=ro", uri=True)) as db:
            count += db.execute("SELECT COUNT(DISTINCT turn) FROM facts").fetchone()[0]
    return count


def run_flags(run_dir: Path) -> list[str]:
    """The headline lines of a finished run's flags (the first lines of its summary)."""
    from bench.records import iter_records
    from bench.runmeta import read_run_meta
    from bench.summarise.flags import compute_flags

    meta = read_run_meta(run_dir / "run.json")[0]
    return compute_flags(meta, iter_records(run_dir)).headline()
