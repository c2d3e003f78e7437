"""One scale point: ingest one suite file with one arm, then measure what it cost.

Run by `python -m bench.perf scale`, each point in its own process
(`python -m bench.perf.scale_child SUITE ARM OUT`) so the peak resident memory is the
point's own. Figures (offline models, the arm's default options from `conf/`):

- `tokens`: the suite's memory texts counted with the run's token counter;
- `ingest_wall_s`, `ingest_cpu_s`: wall and process CPU seconds of `arm.ingest` alone
  (loading, arm construction and the recall check are outside; a throw-away arm first
  ingests two turns so that model loading and lazy imports are outside too);
- `rss_before_mb`: peak resident set before ingesting (imports, models, the suite),
  the process's own (`bench/rss.py`: not the parent's, which Linux's ru_maxrss keeps);
  `peak_rss_mb`: peak after; `ingest_rss_mb` = the difference (what ingestion added
  to the peak: a lower bound of its own memory, since freed memory is reused);
- `store_bytes`: bytes of every file under the arm's store folder after `close`;
- `recall_at_10`: mean recall@10 of the suite's queries (needles or BEAM evidence):
  a check that the arm kept the whole conversation, not a speed figure;
- `stats`: the numeric ingestion stats the arm reports (e.g. `hot_valid`, `facts`).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from bench.paths import CONF_DIR
from bench.rss import peak_rss_mb
from bench.types import Conversation, Session

RECALL_K = 10


def measure(suite_file: Path, arm_name: str, out: Path) -> dict[str, Any]:
    """Ingest `suite_file` with `arm_name` under `out`; return the point's figures."""
    from bench.suite.metrics import mean, recall_at
    from bench.suite.ranking import rank
    from bench.suite.units import suite_conversation
    from bench.suite.validate import load_suite
    from bench.tokens import TokenCounter

    suite = load_suite(suite_file)
    conversation = suite_conversation(suite)
    tokens = TokenCounter()
    _warm_up(arm_name, out / "warm-up", tokens, conversation)
    arm, close_providers = _open(arm_name, out, tokens)
    try:
        counted = sum(tokens.count_many([m.text for m in suite.memories]))
        rss_before = peak_rss_mb()
        cpu, wall = time.process_time(), time.perf_counter()
        stats = arm.ingest(conversation)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        peak = peak_rss_mb()
        recalls = [
            recall_at(rank(arm, question).ranked, query.relevance, RECALL_K)
            for question, query in zip(conversation.questions, suite.queries, strict=True)
            if query.relevance
        ]
    finally:
        arm.close()
        close_providers()
    return {
        "suite": suite.name,
        "memories": len(suite.memories),
        "tokens": counted,
        "ingest_wall_s": round(wall, 3),
        "ingest_cpu_s": round(cpu, 3),
        "ingest_s_per_1k_tokens": round(1000 * wall / max(counted, 1), 4),
        "rss_before_mb": rss_before,
        "peak_rss_mb": peak,
        "ingest_rss_mb": round(peak - rss_before, 1),
        "store_bytes": store_bytes(out / "stores" / arm_name),
        "recall_at_10": mean(recalls),
        "queries": len(recalls),
        "stats": {k: v for k, v in stats.items() if isinstance(v, int | float)},
    }


def _warm_up(arm_name: str, out: Path, tokens: Any, conversation: Conversation) -> None:
    """Ingest the first two turns with a throw-away arm, outside the timed ingestion.

    Models load and lazy imports run here; the store it builds is not counted.
    """
    first = conversation.sessions[0]
    tiny = Session(first.index, first.date_time, first.turns[:2])
    arm, close_providers = _open(arm_name, out, tokens)
    try:
        arm.ingest(Conversation("warm-up", conversation.speakers, (tiny,), ()))
    finally:
        arm.close()
        close_providers()


def _open(arm_name: str, out: Path, tokens: Any) -> tuple[Any, Any]:
    """The arm as `bench.run` builds it (offline provider, default options)."""
    from hydra import compose, initialize_config_dir

    from bench.providers.factory import build_providers
    from bench.run.arm_setup import open_arms
    from bench.run.settings import arm_specs, load_run_config

    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        overrides = [f"arms=[{arm_name}]", f"out={out}", "progress=false"]
        cfg = load_run_config(compose(config_name="config", overrides=overrides))
    providers = build_providers(cfg.provider, out)
    arms = open_arms(arm_specs(cfg), cfg, providers, tokens, out)
    return arms[arm_name], providers.close


def store_bytes(folder: Path) -> int:
    """Total size of the regular files under `folder` (0 when the arm keeps no store)."""
    if not folder.is_dir():
        return 0
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def main(argv: list[str] | None = None) -> int:
    """`python -m bench.perf.scale_child SUITE ARM OUT`: one point as one JSON line."""
    import argparse

    from bench.cli_errors import one_line_errors

    parser = argparse.ArgumentParser(
        prog="python -m bench.perf.scale_child",
        description="One scale point in its own process (run by `python -m bench.perf scale`).",
    )
    for name in ("suite", "arm", "out"):
        parser.add_argument(name)
    args = parser.parse_args(argv)
    return one_line_errors(lambda: _print_point(Path(args.suite), args.arm, Path(args.out)))


def _print_point(suite: Path, arm: str, out: Path) -> int:
    """`measure` one point and print it as one JSON line; 0."""
    print(json.dumps(measure(suite, arm, out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
