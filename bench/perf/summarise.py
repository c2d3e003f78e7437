"""Performance figures of the summariser: 4 arms × 1,986 LoCoMo-shaped records.

`figures()` is called by `python -m bench.perf`; it writes synthetic records into a
temporary run directory and reports the median wall time of `summarise_run` (load +
statistics), of the text rendering, and their ratio to a bare read of the same files;
then the same ratios over the committed full run, when present. Standard library only.
"""

from __future__ import annotations

import gc
import json
import os
import random
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from bench.files import read_file_bytes
from bench.perf.startup import COMMITTED_RUN
from bench.records import OK, ArmResult, QuestionRecord, write_record
from bench.scoring.rules import DEFAULT_F1_THRESHOLD, f1_outcome_name
from bench.summarise import load_run, summarise_records
from bench.summarise.render import render_text

OUTCOME_F1 = f1_outcome_name(DEFAULT_F1_THRESHOLD)

LOCOMO_CATEGORY_COUNTS = {1: 282, 2: 321, 3: 96, 4: 841, 5: 446}
ARMS = ("raw", "rag", "neuromorphic", "tuned")


def synthetic_record(index: int, category: int, rng: random.Random) -> QuestionRecord:
    """One LoCoMo-shaped record with every arm answered (random outcomes, F1, latency)."""
    conv = f"conv-{26 + index % 10}"
    arms = {}
    for skill, arm in enumerate(ARMS):
        correct = rng.random() < 0.35 + 0.1 * skill
        f1 = 1.0 if correct else rng.random() * 0.5
        arms[arm] = ArmResult(
            status=OK,
            answer="not mentioned" if category == 5 and correct else "an answer",
            correct=correct,
            scores={"f1": f1, "em": correct, "abstained": category == 5 and correct},
            context_tokens=rng.randint(200, 30_000),
            latency_ms=rng.uniform(50, 2_000),
            outcome=OUTCOME_F1,
        )
    if category == 5:
        for res in arms.values():
            res.scores["trap_hit"] = not res.correct and rng.random() < 0.5
    return QuestionRecord(
        question_id=f"{conv}:{index}",
        dataset="locomo",
        conversation_id=conv,
        category=category,
        question=f"Question {index % 150}?",
        gold=None if category == 5 else "gold",
        evidence=["D1:1"],
        arms=arms,
        adversarial_answer="trap" if category == 5 else None,
    )


def write_synthetic_run(run_dir: Path, seed: int = 0) -> int:
    """Write 1,986 synthetic records into `run_dir/questions`; return how many."""
    rng = random.Random(seed)
    cats = [c for c, n in LOCOMO_CATEGORY_COUNTS.items() for _ in range(n)]
    rng.shuffle(cats)
    for i, cat in enumerate(cats):
        record = synthetic_record(i, cat, rng)
        write_record(run_dir, record.question_id.replace(":", "_"), record)
    return len(cats)


def _open_read(path: str) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


def bare_read(run_dir: Path, read: Callable[[str], bytes] = _open_read) -> int:
    """The floor the summariser is measured against: read and `json.loads` every record.

    Names listed and joined as strings, as the summariser's reader does (a `glob` of
    Path objects would add its own cost to the floor). Files are read with
    `open(...).read()` unless `read` is given; the summariser reads them with
    `bench.files.read_file_bytes` (half the system calls), so `_ratios` also reports
    the ratio to a floor that reads the same way.
    """
    folder = str(run_dir / "questions")
    count = 0
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        if name.endswith(".json"):
            json.loads(read(os.path.join(folder, name)))
            count += 1
    return count


def _timed_pair(run_dir: Path) -> tuple[float, ...]:
    """Seconds of the floor and of the summariser, in one process.

    Wall and CPU of `bare_read`; wall of the whole summarise, CPU of `load_run`, CPU of
    `summarise_records`, wall of `load_run`; wall of `bare_read` via `read_file_bytes`.
    """
    start, cpu = time.perf_counter(), time.process_time()
    bare_read(run_dir)
    bare_wall, bare_cpu = time.perf_counter() - start, time.process_time() - cpu
    start = time.perf_counter()
    bare_read(run_dir, read_file_bytes)
    same_reader_wall = time.perf_counter() - start
    start, cpu = time.perf_counter(), time.process_time()
    run = load_run(run_dir)
    mid, cpu_mid = time.perf_counter(), time.process_time()
    summarise_records(run)
    end, cpu_end = time.perf_counter(), time.process_time()
    return (
        bare_wall,
        bare_cpu,
        end - start,
        cpu_mid - cpu,
        cpu_end - cpu_mid,
        mid - start,
        same_reader_wall,
    )


def _ratios(run_dir: Path, repeats: int) -> tuple[dict[str, float], float]:
    """Median summarise and bare-read figures over `run_dir`, and the median render time.

    `summarise_over_bare_read` = median summarise time (load + statistics) / median
    time of `bare_read` over the same files in the same process (target ≤ 1.5, issue
    15), both with the cyclic garbage collector off as `python -m bench.summarise` runs;
    `..._gc_on` is the same ratio with it on (a caller inside a larger process);
    `..._same_reader` divides by a floor that reads the files as the summariser does
    (`read_file_bytes`), so it shows the cost above reading and parsing alone. The
    `cpu_*` ratios use process CPU time instead (steadier on a shared machine), split
    into loading the records (`load_run`: read, parse, typed records) and the statistics.
    """
    rows, rows_gc_on, render_s = [], [], []
    for _ in range(repeats):
        rows_gc_on.append(_timed_pair(run_dir))
        gc.disable()
        try:
            rows.append(_timed_pair(run_dir))
        finally:
            gc.enable()
        summary = summarise_records(load_run(run_dir))
        start = time.perf_counter()
        render_text(summary)
        render_s.append(time.perf_counter() - start)

    def med(table: Sequence[tuple[float, ...]], i: int) -> float:
        return statistics.median(row[i] for row in table)

    bare, bare_cpu = med(rows, 0), med(rows, 1)
    load_cpu, stats_cpu = med(rows, 3), med(rows, 4)
    figures = {
        "summarise_s": round(med(rows, 2), 4),
        "bare_read_json_s": round(bare, 4),
        "summarise_over_bare_read": round(med(rows, 2) / bare, 2),
        "summarise_over_bare_read_gc_on": round(med(rows_gc_on, 2) / med(rows_gc_on, 0), 2),
        "summarise_over_bare_read_same_reader": round(med(rows, 2) / med(rows, 6), 2),
        "cpu_load_over_bare_read": round(load_cpu / bare_cpu, 2),
        "cpu_stats_over_bare_read": round(stats_cpu / bare_cpu, 2),
        "cpu_summarise_over_bare_read": round((load_cpu + stats_cpu) / bare_cpu, 2),
    }
    return figures, statistics.median(render_s)


def figures(repeats: int = 5, committed: Path | None = COMMITTED_RUN) -> dict[str, object]:
    """Summarise vs bare read over 4 arms × 1,986 synthetic questions, and over the real run.

    The synthetic records carry only what the statistics read (the floor is small, so
    the ratio is the harder one); `committed_run` repeats the figures over the committed
    full LoCoMo run (`committed`, by default `bench.perf.startup.COMMITTED_RUN`: real
    records with provenance, retrieved ids and usage, the files the CLI target is set
    on), when it is present.
    Ratios are in `_ratios`.
    """
    with tempfile.TemporaryDirectory(prefix="armbench-perf-") as tmp:
        run_dir = Path(tmp)
        write_synthetic_run(run_dir)
        synthetic, render = _ratios(run_dir, repeats)
    out: dict[str, object] = {
        "summarise_4x1986_s": synthetic.pop("summarise_s"),
        "render_text_4x1986_s": round(render, 5),
        "bare_read_json_4x1986_s": synthetic.pop("bare_read_json_s"),
        **synthetic,
    }
    if committed is not None and (committed / "questions").is_dir():
        out["committed_run"] = {"run": committed.name, **_ratios(committed, repeats)[0]}
    return out


if __name__ == "__main__":
    import argparse

    argparse.ArgumentParser(
        prog="python -m bench.perf.summarise",
        description="The summariser's figures as JSON (also `python -m bench.perf summarise`).",
    ).parse_args()
    print(json.dumps(figures(), indent=1))
