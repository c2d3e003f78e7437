"""`python -m bench.suite [hydra overrides]`: recall suites over every configured arm.

Example: `python -m bench.suite suite.path=datasets/fixtures/suites/smoke.json arms=[rag]`.
A multirun (`-m arm_options.rag.top_k=5,10,20`) gives every job its own directory
`<out>/<overrides>` and rewrites the paired `<out>/sweep.md` (bench.summarise.sweep).
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

import hydra
from omegaconf import DictConfig

from bench.cli_errors import exit_on_errors
from bench.paths import CONF_DIR
from bench.suite.config import SuiteConfig, load_suite_config

log = logging.getLogger("bench.suite")


def run(cfg: SuiteConfig) -> dict[str, Any]:
    """Load the suites, run every arm, write the outputs; return the report.

    `phase=predict` only stores the retrievals and returns an empty report.
    """
    from bench.suite.adapters import limit_suites, load_suites
    from bench.suite.output import write_outputs
    from bench.suite.runner import run_suites

    path = Path(cfg.suite.path or "")
    suites = load_suites(cfg.suite.adapter, path, cfg.suite.split, cfg.suite.seed)
    suites = limit_suites(suites, cfg.limit)
    runs = run_suites(cfg, suites)
    if cfg.phase == "predict":
        return {}
    return write_outputs(cfg, suites, runs, _meta(cfg, suites))


def _meta(cfg: SuiteConfig, suites: list[Any]) -> dict[str, Any]:
    from bench.suite.adapters import SEEDED

    return {
        "benchmark": suites[0].name if len(suites) == 1 else f"{len(suites)} suites",
        "project_name": "armbench",
        "kind": ",".join(sorted({s.kind for s in suites})),
        "adapter": cfg.suite.adapter,
        "path": cfg.suite.path,
        "seed": cfg.suite.seed if cfg.suite.adapter in SEEDED else None,
        "suites": [s.name for s in suites],
        "memories": sum(len(s.memories) for s in suites),
        "queries": sum(len(s.queries) for s in suites),
        "provider": cfg.provider.name,
        "answerer_model": cfg.provider.answerer.model if cfg.suite.answer else None,
        "judge_model": None,
        "embedder_model": cfg.provider.embedder.model,
        "offline": cfg.provider.answerer.kind == "offline",
        "write_path": "ingest (one memory = one unit, checkpointed store)",
    }


@hydra.main(config_path=str(CONF_DIR), config_name="suite", version_base="1.3")
def _hydra_main(cfg: DictConfig) -> None:
    from bench.run.sweep import job_dirs, record_sweep_row

    with exit_on_errors():
        suite_cfg = load_suite_config(cfg)
        suite_cfg.out, suite_cfg.stores = job_dirs(suite_cfg.out, suite_cfg.stores)
        report = run(suite_cfg)
    if suite_cfg.phase == "predict":
        print(f"{Path(suite_cfg.out) / 'suites'}: predictions stored; run phase=evaluate")
        return
    record_sweep_row(suite_cfg.out, report)
    summary = Path(suite_cfg.out) / "SUMMARY.md"
    print(headline(summary.read_text(encoding="utf-8")))
    print(summary)


def headline(summary: str) -> str:
    """SUMMARY.md's opening: its title, what was run and the first (smallest K) table."""
    lines = summary.splitlines()
    sections = [i for i, line in enumerate(lines) if line.startswith("## ")]
    end = sections[1] if len(sections) > 1 else len(lines)
    return "\n".join(lines[:end]).rstrip() + "\n"


def main() -> None:
    """Run the job (a plain run composes its config once; a bad override is one line)."""
    from bench.run.hydra_job import is_plain_run, run_job_once

    args = sys.argv[1:]
    if not is_plain_run(args):
        _hydra_main()
        return
    with exit_on_errors():
        run_job_once(__file__, "suite", _hydra_main, args)


if __name__ == "__main__":
    main()
