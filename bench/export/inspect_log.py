"""One inspect_ai evaluation log per arm, written with `inspect_ai.log`'s own API.

The inspect log format is versioned but not a frozen specification; its maintainers point
other tools at the library's own classes (`EvalLog`, `EvalSample`, `Score`) and
`write_eval_log`, so this module builds those objects and never writes the file itself.
A sample is one question: input (the question), target (the gold answer), the arm's answer
as the model output, and scores: `outcome` (the run's rule, `C`/`I`), `f1`, and one
`judge/<id>` per judge verdict. Its metadata holds the category, conversation, retrieved
ids, context tokens and the flags; the eval's metadata holds `run_metadata` (provenance
and verdict). Needs the `inspect` extra (`pip install 'armbench[inspect]'`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.errors import ConfigError
from bench.export.metadata import flag_rows, run_metadata
from bench.hashing import stable_hash
from bench.paths import safe_name
from bench.records import ArmResult, QuestionRecord
from bench.summarise.model import Summary

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog, EvalSample
    from inspect_ai.scorer import Score

SCORER = "armbench"
"""The scorer name every score carries (the scores are armbench's, made during the run)."""


def import_inspect() -> None:
    """Raise ConfigError (one line) when inspect_ai is not installed."""
    try:
        import inspect_ai.log  # noqa: F401
    except ImportError:
        raise ConfigError(
            "--format inspect: inspect_ai is not installed: pip install 'armbench[inspect]'"
        ) from None


def verdict_value(correct: bool) -> str:
    """The `C` (correct) / `I` (incorrect) for a boolean verdict."""
    from inspect_ai.scorer import CORRECT, INCORRECT

    return str(CORRECT if correct else INCORRECT)  # a str with or without the extra installed


def sample_scores(res: ArmResult) -> dict[str, Score]:
    """`outcome` (the run's rule), `f1`, and `judge/<id>` for each judge that gave a verdict."""
    from inspect_ai.scorer import Score

    scores: dict[str, Score] = {}
    if res.correct is not None:
        scores["outcome"] = Score(
            value=verdict_value(res.correct), answer=res.answer, explanation=res.outcome
        )
    if isinstance(res.scores.get("f1"), int | float):
        scores["f1"] = Score(value=float(res.scores["f1"]), answer=res.answer)
    for judge_id, j in sorted(res.judgements.items()):
        if j.status == "ok" and j.verdict is not None:
            scores[f"judge/{judge_id}"] = Score(
                value=verdict_value(j.verdict),
                answer=res.answer,
                explanation=j.raw,
                metadata={"model": j.model, "prompt_hash": j.prompt_hash, "cached": j.cached},
            )
    return scores


def sample_metadata(record: QuestionRecord, res: ArmResult, flags: list[str]) -> dict[str, Any]:
    """Category, conversation, retrieved ids, context tokens, flags and judge statuses."""
    marks = [*flags]
    marks += ["answer truncated"] if res.truncated else []
    marks += ["context truncated"] if res.context_truncated else []
    return {
        "category": record.category,
        "question_type": record.question_type,
        "conversation_id": record.conversation_id,
        "evidence": list(record.evidence),
        "adversarial_answer": record.adversarial_answer,
        "status": res.status,
        "retrieved_ids": list(res.retrieved_ids),
        "context_tokens": res.context_tokens,
        "latency_ms": res.latency_ms,
        "answerer": res.answerer,
        "cached": res.cached,
        "flags": marks,
        "judge_status": {k: j.status for k, j in sorted(res.judgements.items())},
    }


def eval_sample(record: QuestionRecord, res: ArmResult, model: str, flags: list[str]) -> EvalSample:
    """One question as an inspect sample (an arm in error carries its error)."""
    from inspect_ai.log import EvalError, EvalSample
    from inspect_ai.model import ChatMessageAssistant, ChatMessageUser, ModelOutput

    answer = res.answer or ""
    error = None
    if res.status != "ok":
        error = EvalError(message=res.error or res.status, traceback="", traceback_ansi="")
    return EvalSample(
        id=record.question_id,
        epoch=1,
        input=record.question,
        target=record.gold or "",
        messages=[ChatMessageUser(content=record.question), ChatMessageAssistant(content=answer)],
        output=ModelOutput.from_content(model=model, content=answer),
        scores=sample_scores(res),
        metadata=sample_metadata(record, res, flags),
        error=error,
        total_time=None if res.latency_ms is None else res.latency_ms / 1000,
    )


def eval_results(summary: Summary, arm: str, samples: list[EvalSample]) -> Any:
    """The arm's headline figures: accuracy on the scored and full sets, mean F1."""
    from inspect_ai.log import EvalMetric, EvalResults, EvalScore

    stats = summary.arms.get(arm)
    figures: list[tuple[str, float | None]] = []
    if stats is not None:
        figures = [
            ("accuracy", stats.accuracy["scored"].value),
            ("accuracy_all", stats.accuracy["all"].value),
            ("f1", stats.f1.get("scored")),
        ]
    metrics: dict[str, EvalMetric] = {}
    for name, value in figures:
        if value is not None:
            metrics[name] = EvalMetric(name=name, value=float(value))
    scored = sum(1 for s in samples if s.scores and "outcome" in s.scores)
    return EvalResults(
        total_samples=len(samples),
        completed_samples=sum(1 for s in samples if s.error is None),
        scores=[
            EvalScore(
                name="outcome",
                scorer=SCORER,
                scored_samples=scored,
                unscored_samples=len(samples) - scored,
                metrics=metrics,
                metadata={"rule": summary.outcome},
            )
        ],
    )


def arm_log(summary: Summary, records: list[QuestionRecord], arm: str) -> EvalLog:
    """The inspect log of one arm: its samples, results and the run's metadata."""
    from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalRevision, EvalSpec, EvalStats

    meta = run_metadata(summary)
    model = (summary.meta and summary.meta.provider.answerer_model) or "unknown"
    flags = [f.kind for f in summary.flags.arms.get(arm, ())]
    flags += [f"judge {f.kind}" for f in summary.flags.primary]
    samples = [eval_sample(r, r.arms[arm], model, flags) for r in records if arm in r.arms]
    prov = summary.meta.provenance if summary.meta else None
    revision = None
    if prov is not None and prov.git_commit:
        revision = EvalRevision(type="git", origin="", commit=prov.git_commit, dirty=prov.git_dirty)
    spec = EvalSpec(
        eval_id=stable_hash([meta.get("config_hash"), summary.run_dir, arm]),
        run_id=stable_hash([meta.get("config_hash"), summary.run_dir]),
        created=meta.get("created_at") or meta.get("updated_at") or "1970-01-01T00:00:00+00:00",
        task=f"armbench/{summary.dataset}/{arm}",
        dataset=EvalDataset(
            name=summary.dataset,
            samples=len(samples),
            sample_ids=[s.id for s in samples],
        ),
        model=model,
        config=EvalConfig(),
        revision=revision,
        packages=dict(prov.packages) if prov else {},
        metadata={**meta, "arm": arm, "arm_flags": flag_rows(summary.flags.arms.get(arm, ()))},
    )
    failed = any(s.error is not None for s in samples)
    return EvalLog(
        status="error" if failed else "success",
        stats=EvalStats(started_at=spec.created, completed_at=meta.get("updated_at") or ""),
        eval=spec,
        results=eval_results(summary, arm, samples),
        samples=samples,
    )


def write_inspect_logs(
    summary: Summary, records: list[QuestionRecord], arms: list[str], out: Path
) -> list[Path]:
    """Write `<out>/<run>-<arm>.eval` for every arm with `write_eval_log`; return the paths."""
    import_inspect()
    from inspect_ai.log import write_eval_log

    out.mkdir(parents=True, exist_ok=True)
    run_name = safe_name(Path(summary.run_dir).name or "run")
    written = []
    for arm in arms:
        path = out / f"{run_name}-{safe_name(arm)}.eval"
        write_eval_log(arm_log(summary, records, arm), str(path))
        written.append(path)
    return written
