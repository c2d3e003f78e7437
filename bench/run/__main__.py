"""`python -m bench.run [hydra overrides]`: run or resume a benchmark.

Examples::

    python -m bench.run dataset=smoke arms=[raw,rag]
    python -m bench.run dataset=locomo limit.conversations=1 report=true
    python -m bench.run provider=openai provider.answerer.model=gpt-4o-mini

Re-running with the same `out` resumes: complete questions are skipped, arms that
are missing or in `error` are redone. Exit status: 0 when every requested result is
`ok`, 1 when some remain in `error` or lack a verdict, 2 on a configuration or data error
(or a failure no re-run can fix: bench.errors.PermanentError), 130/143 when
stopped by SIGINT/SIGTERM (bench.run.interrupt: one end line, within seconds).
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import hydra
from omegaconf import DictConfig

from bench.cli_errors import exit_on_errors
from bench.config import RunConfig
from bench.errors import BenchError, ConfigError
from bench.paths import CONF_DIR
from bench.providers.secrets import install_redaction
from bench.remote.stage import remote_run, stage
from bench.remote.uri import is_remote
from bench.result_parts import MAX_DUPLICATE_SHARE, MAX_FAILED_SHARE, MAX_UNGROUNDED_SHARE
from bench.run.directory import key_env_names
from bench.run.outcome import RunOutcome
from bench.run.provenance import secret_values
from bench.run.settings import launch, load_run_config
from bench.scoring import retrieval_health as ret_health
from bench.scoring.health import (
    HealthTable,
    degraded_warnings,
)


@hydra.main(config_path=str(CONF_DIR), config_name="config", version_base="1.3")
def _hydra_main(cfg: DictConfig) -> None:  # noqa: C901, PLR0912
    for noisy in ("httpx", "httpx2", "openai"):  # one INFO line per HTTP request otherwise
        logging.getLogger(noisy).setLevel(logging.WARNING)
    with exit_on_errors():
        run_cfg = load_run_config(cfg)
        from bench.run.sweep import job_dirs

        # a multirun job's own directory; its stores shared in the sweep folder
        run_cfg.out, sweep_dir = job_dirs(run_cfg.out, None)
        run_cfg = _staged(run_cfg, sweep_dir)
        install_redaction(secret_values(key_env_names(run_cfg)))
        if run_cfg.dry_run:
            from bench.run.dry_run import estimate_run

            estimate = estimate_run(run_cfg)
            print("\n".join(estimate.report(Path(run_cfg.out))))
            estimate.check_budget(run_cfg.budget.max_usd)
            return
        outcome = _run(run_cfg, sweep_dir)
        from bench.answer.repeat_plan import plan_repeats

        if skipped := plan_repeats(run_cfg).skipped:
            print(skipped, file=sys.stderr)
        wrote = "predictions" if run_cfg.phase == "predict" else "records"
        print(
            f"run {outcome.run_dir}: {outcome.questions} questions, "
            f"{outcome.written} {wrote} written, {outcome.errors} arm results in error, "
            f"{outcome.judge_errors} judge errors, {outcome.judge_unparseable} unparseable "
            "verdicts",
            file=sys.stderr,
        )
        if run_cfg.phase != "predict":  # no records yet: nothing to report or manifest
            from bench.run.sweep import in_multirun, record_sweep_job, run_outcomes

            if in_multirun():  # reads every record: only a -m sweep job has a table to feed
                outcomes, clusters = run_outcomes(outcome.run_dir)
                record_sweep_job("run", outcomes, clusters=clusters)
            if run_cfg.report:
                _report(str(outcome.run_dir), fresh=outcome.written == 0)
            from bench.verify.check import refresh_manifest

            refresh_manifest(outcome.run_dir, bool(outcome.written))  # last: hashes SUMMARY.md
        if (remote := remote_run(run_cfg)) is not None:
            remote.push_top()  # SUMMARY.md, MANIFEST.json, report.html
    degraded = _extraction_degraded(outcome.health) + _retrieval_degraded(outcome.retrieval)
    if outcome.errors:
        print(
            f"error: {outcome.errors} arm results in `error` (first: {outcome.first_error}); "
            "re-run the same command to retry them",
            file=sys.stderr,
        )
        sys.exit(1)
    if missing := outcome.judge_errors + outcome.judge_unparseable:
        print(
            f"error: {missing} verdicts missing ({outcome.judge_errors} judge errors, "
            f"{outcome.judge_unparseable} unparseable): those answers are not scored; re-run "
            "the same command to ask again (unparseable ones: add scoring.rejudge=true)",
            file=sys.stderr,
        )
    if degraded or missing:
        sys.exit(1)


def _extraction_degraded(table: HealthTable) -> list[str]:
    """Print the loud extraction-health warnings (bench.scoring.health); the lines."""
    degraded = degraded_warnings(table)
    for line in degraded:
        print(f"WARNING: {line}", file=sys.stderr)
    if degraded:
        print(
            f"error: extraction degraded for {len(degraded)} arm/conversation pair(s) "
            f"(over {MAX_FAILED_SHARE:.0%} of exchanges failed, no facts stored, over "
            f"{MAX_DUPLICATE_SHARE:.0%}/{MAX_UNGROUNDED_SHARE:.0%} of facts duplicate/ungrounded): "
            "those arms answered from an empty or invented memory; see extraction_errors.json",
            file=sys.stderr,
        )
    return degraded


def _retrieval_degraded(table: ret_health.RetrievalTable) -> list[str]:
    """Print the loud retrieval-health warnings (bench.scoring.retrieval_health); the lines."""
    degraded = ret_health.degraded_warnings(table)
    for line in degraded:
        print(f"WARNING: {line}", file=sys.stderr)
    if degraded:
        print(
            f"error: retrieval degraded for {len(degraded)} arm/unit pair(s) "
            f"({'; '.join(ret_health.causes(table))}): those arms answered from contexts "
            "that are missing, cut or unfilled; see retrieval_health in run.json",
            file=sys.stderr,
        )
    return degraded


def _run(run_cfg: RunConfig, sweep_dir: str | None) -> RunOutcome:
    """The run itself; SIGINT/SIGTERM end it within seconds with its end line."""
    from bench.run.interrupt import interruptible
    from bench.run.pipeline import run_benchmark

    if run_cfg.budget.max_usd is not None:  # the estimate first, to refuse a run over it
        from bench.run.dry_run import estimate_run

        estimate_run(run_cfg).check_budget(run_cfg.budget.max_usd)
    shared = Path(sweep_dir) / "stores" if sweep_dir else None
    with interruptible(Path(run_cfg.out)):
        return run_benchmark(run_cfg, shared)


def _staged(run_cfg: RunConfig, sweep_dir: str | None) -> RunConfig:
    """`out=s3://...` runs in its local staging folder (bench/remote/stage.py)."""
    if not is_remote(run_cfg.out):
        return run_cfg
    if sweep_dir:
        raise ConfigError(
            f"out={run_cfg.out} with -m: a sweep needs a local out; give each job its own "
            "out=s3://... in separate runs"
        )
    return stage(run_cfg)


def _report(run_dir: str, fresh: bool = False) -> None:
    """Summarise (prints the tables, writes SUMMARY.md) and write report.html.

    `fresh`: this session wrote no record; outputs newer than every input are kept.
    """
    from bench import summarise
    from bench.report import page as report
    from bench.run.resume import report_current

    if fresh and report_current(Path(run_dir)):
        print(f"{run_dir}: SUMMARY.md, report.html, explorer.html up to date", file=sys.stderr)
        return

    if summarise.main([run_dir, "--write"]) != 0:
        raise BenchError(f"{run_dir}: summarise failed")
    report.main([run_dir])


def main() -> None:
    """Validate config-group choices, then hand over to Hydra."""
    launch(_hydra_main, __file__)


if __name__ == "__main__":
    main()
