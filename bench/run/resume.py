"""Is anything left to do? Decided from the records alone, before any provider or arm exists.

Re-running a finished run must cost little more than reading its records: building the
providers loads WordLlama and nltk (through the offline answerer), and opening the arms
imports LanceDB — seconds of start-up for nothing. So the pipeline asks `pending_questions`
first, with the same rule the full path uses (`arms_to_run`), the judges stood in for by
what that rule reads of them (id, model, prompt hash: `JudgeKey`). Only when a unit has
pending questions are providers and arms built.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from bench.answer.repeat_plan import plan_repeats
from bench.config import JudgeConfig, RunConfig
from bench.errors import ConfigError
from bench.run.arms_pending import arms_to_run
from bench.run.budgets import plan_budgets
from bench.run.directory import RunDirectory
from bench.types import Conversation


@dataclass(frozen=True)
class JudgeKey:
    """What `needs_judgement` reads of a judge (a `bench.judge.protocol.JudgeIdentity`).

    Equal to the built judge's `judge_id`, `model` and `prompt_hash`.
    """

    judge_id: str
    """The judge's id (`judges.N.judge_id`)."""
    model: str
    """The judging model: the endpoint's configured model, as `OpenAIChat.model` is."""
    prompt_hash: str
    """sha256 of the judge's prompt file, as `JudgePrompt.sha256`."""


def check_primary_judge(cfg: RunConfig) -> None:
    """Refuse a `scoring.primary_judge` that names no configured judge (one line)."""
    judge_ids = [j.judge_id for j in cfg.judges]
    if cfg.scoring.primary_judge and cfg.scoring.primary_judge not in judge_ids:
        raise ConfigError(
            f"scoring.primary_judge={cfg.scoring.primary_judge}: no such judge in judges "
            f"({judge_ids or 'none'}); add one (e.g. judge=llm) or set scoring.primary_judge=null"
        )
    from bench.judge.official.judges import SCORE_ONLY_KINDS

    kinds = {j.judge_id: j.kind for j in cfg.judges}
    if kinds.get(cfg.scoring.primary_judge or "") in SCORE_ONLY_KINDS:
        raise ConfigError(
            f"scoring.primary_judge={cfg.scoring.primary_judge}: this judge gives scores, not "
            "right/wrong verdicts; set scoring.primary_judge=null (its scores are in the summary)"
        )


def judge_keys(judges: Iterable[JudgeConfig]) -> tuple[JudgeKey, ...] | None:
    """The judges' keys, or None when one cannot be keyed without building it.

    None sends the caller down the full path, where `build_judge` names the problem (an
    unknown kind) in its own words.
    """
    from bench.judge.judge_prompt import load_judge_prompt
    from bench.judge.judges import REQUIRED_RUBRICS, RUBRIC_CHOOSERS

    keys = []
    for cfg in judges:
        if cfg.kind not in RUBRIC_CHOOSERS or cfg.endpoint.kind != "openai" or cfg.runs != 1:
            return None
        prompt = load_judge_prompt(cfg.prompt, REQUIRED_RUBRICS[cfg.kind])
        keys.append(JudgeKey(cfg.judge_id, cfg.endpoint.model, prompt.sha256))
    return tuple(keys)


def pending_questions(
    conversation: Conversation, cfg: RunConfig, run_dir: RunDirectory, judges: tuple[JudgeKey, ...]
) -> int:
    """How many of the conversation's questions still need an answer or a judgement."""
    pending, plan, budgets = 0, plan_repeats(cfg), plan_budgets(cfg)
    for question in conversation.questions:
        record = run_dir.load_record(question)
        to_answer, to_judge = arms_to_run(
            record, cfg.arms, judges, cfg.scoring.rejudge, plan, budgets
        )
        pending += bool(to_answer or to_judge)
    return pending


def nothing_pending(
    conversations: Iterable[Conversation], cfg: RunConfig, run_dir: RunDirectory
) -> bool:
    """True when every question of `conversations` is finished for every requested arm.

    Only for `phase=all` (predict and evaluate keep their own notion of done). False,
    never an error, when the answer needs the full path (a judge that cannot be keyed).
    """
    if cfg.phase != "all":
        return False
    check_primary_judge(cfg)
    judges = judge_keys(cfg.judges)
    if judges is None:
        return False
    return all(pending_questions(c, cfg, run_dir, judges) == 0 for c in conversations)


REPORT_OUTPUTS = ("SUMMARY.md", "report.html", "explorer.html")
"""What `report=true` writes (`bench.summarise --write`, then `bench.report`)."""


def report_current(run_dir: Path) -> bool:
    """True when every report output exists and is newer than run.json and every record.

    make's rule: outputs at least as new as all their inputs are up to date, so a session
    that wrote nothing need not render them again (4 s of a 5 s resume with `report=true`).
    """
    outputs = [run_dir / name for name in REPORT_OUTPUTS]
    if not all(p.is_file() for p in outputs):
        return False
    oldest_output = min(p.stat().st_mtime_ns for p in outputs)
    newest_input = (run_dir / "run.json").stat().st_mtime_ns
    with os.scandir(run_dir / "questions") as entries:
        for entry in entries:
            if entry.name.endswith(".json"):
                newest_input = max(newest_input, entry.stat().st_mtime_ns)
    return oldest_output >= newest_input
