"""A run whose units go to worker processes or Ray: the parent only plans, waits and sums.

The parent builds no provider and opens no arm: each worker builds its own
(`bench.run.scale.unit_task.run_unit`), so loading WordLlama and nltk here would only take
CPU from the workers. What run.json needs of the providers (the answerer's model, the
judges' models and prompt hashes) is read from the configuration, as the providers
themselves read it.
"""

from __future__ import annotations

from bench.answer.answer_prompt import AnswerPrompt
from bench.config import RunConfig
from bench.errors import ConfigError
from bench.judge.judge_set import key_meta
from bench.providers.accounting import add_accounting
from bench.run.directory import RunDirectory
from bench.run.outcome import RunOutcome
from bench.run.resume import JudgeKey, judge_keys
from bench.run.run_json import RunJson, run_meta
from bench.run.scale.executor import UnitPlan
from bench.types import Dataset


def answerer_model(cfg: RunConfig) -> str:
    """The answerer's model name as its provider reports it (`ChatProvider.model`)."""
    if cfg.provider.answerer.kind == "offline":
        from bench.providers.offline_answer import MODEL_ID

        return MODEL_ID
    return cfg.provider.answerer.model


def run_fanned_out(
    cfg: RunConfig,
    dataset: Dataset,
    prompt: AnswerPrompt,
    run_dir: RunDirectory,
    ident: dict[str, object],
    plan: UnitPlan,
) -> RunOutcome:
    """Run every unit of `plan` out of process; sum their counts and costs into run.json."""
    if cfg.phase != "all":
        raise ConfigError(
            f"phase={cfg.phase} with workers/executor/out=s3://: phases run in one "
            "process on a local out; drop workers=/executor= (shard=i/n works)"
        )
    judges: tuple[JudgeKey, ...] | None = judge_keys(cfg.judges)
    if judges is None:  # a judge that cannot be keyed: building it names the problem
        judges = _built_judge_keys(cfg, run_dir)
    outcome = RunOutcome(run_dir=run_dir.path)
    meta = run_meta(cfg, dataset, prompt, answerer_model(cfg), key_meta(judges, cfg.judges))
    run_json = RunJson(cfg, run_dir, dict(ident), meta, outcome, dict)
    run_json.save()
    try:
        for done in plan.run(prompt, str(run_dir.path), run_dir.record_provenance):
            outcome.add_unit(done)
            run_json.units = add_accounting(run_json.units, done.accounting)
    finally:
        run_json.save()
    return outcome


def _built_judge_keys(cfg: RunConfig, run_dir: RunDirectory) -> tuple[JudgeKey, ...]:
    """Build the providers and judges as a worker would (raising its error), keep the keys."""
    from bench.judge.judge_set import build_judges
    from bench.providers.factory import build_providers

    providers = build_providers(cfg.provider, run_dir.path)
    try:
        built = build_judges(cfg.judges, providers, cfg.scoring.judge_attempts)
    finally:
        providers.close()
    return tuple(JudgeKey(j.judge_id, j.model, j.prompt_hash) for j in built)
