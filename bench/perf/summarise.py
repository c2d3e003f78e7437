"""Performance figure of the summariser: 4 arms × 1,986 synthetic LoCoMo-shaped records.

`figures()` is called by `python -m bench.perf`; it writes the records into a temporary
run directory and reports the median wall time of `summarise_run` (load + statistics)
and of the text rendering. Standard library only.
"""

from __future__ import annotations

import json
import random
import statistics
import tempfile
import time
from pathlib import Path

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


def bare_read(run_dir: Path) -> int:
    """The floor the summariser is measured against: read and `json.loads` every record."""
    count = 0
    for path in sorted((run_dir / "questions").glob("*.json")):
        json.loads(path.read_bytes())
        count += 1
    return count


def figures(repeats: int = 5) -> dict[str, float]:
    """Median seconds to summarise (and to render) 4 arms × 1,986 questions.

    `summarise_over_bare_read` = median summarise time / median time of `bare_read` over
    the same files in the same process (target ≤ 1.5, issue 15). The `cpu_*` ratios use
    process CPU time instead (steadier on a shared machine), split into loading the
    records (`load_run`: read, parse, typed records) and the statistics.
    """
    with tempfile.TemporaryDirectory(prefix="armbench-perf-") as tmp:
        run_dir = Path(tmp)
        write_synthetic_run(run_dir)
        summarise_s, render_s, bare_s = [], [], []
        cpu_bare, cpu_load, cpu_stats = [], [], []
        for _ in range(repeats):
            start, cpu = time.perf_counter(), time.process_time()
            bare_read(run_dir)
            bare_s.append(time.perf_counter() - start)
            cpu_bare.append(time.process_time() - cpu)
            start, cpu = time.perf_counter(), time.process_time()
            run = load_run(run_dir)
            cpu_mid = time.process_time()
            summary = summarise_records(run)
            mid = time.perf_counter()
            cpu_load.append(cpu_mid - cpu)
            cpu_stats.append(time.process_time() - cpu_mid)
            render_text(summary)
            summarise_s.append(mid - start)
            render_s.append(time.perf_counter() - mid)
    bare, bare_cpu = statistics.median(bare_s), statistics.median(cpu_bare)
    load_cpu, stats_cpu = statistics.median(cpu_load), statistics.median(cpu_stats)
    return {
        "summarise_4x1986_s": round(statistics.median(summarise_s), 4),
        "render_text_4x1986_s": round(statistics.median(render_s), 5),
        "bare_read_json_4x1986_s": round(bare, 4),
        "summarise_over_bare_read": round(statistics.median(summarise_s) / bare, 2),
        "cpu_load_over_bare_read": round(load_cpu / bare_cpu, 2),
        "cpu_stats_over_bare_read": round(stats_cpu / bare_cpu, 2),
        "cpu_summarise_over_bare_read": round((load_cpu + stats_cpu) / bare_cpu, 2),
    }


if __name__ == "__main__":
    print(json.dumps(figures(), indent=1))
