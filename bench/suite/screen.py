"""`python -m bench.screen [hydra overrides]`: retrieval-only screens, no generation.

For every question and arm it retrieves the context (read-only: no reinforcement)
and measures whether the gold answer was reachable at all:

- evidence recall = |evidence ∩ retrieved source turns| / |evidence|  (higher is better;
  arms that put the whole transcript in context, like raw, report None);
- gold-token recall = share of the gold answer's normalised tokens found in the
  context (1.0 = every gold token is somewhere in the context; higher is better);
- context tokens.

Screens reuse the run's ingestion stores (same `out`), so screening after a run
costs only retrieval. Sweep with Hydra multirun, e.g.
`python -m bench.screen -m dataset=locomo arms=[rag] arm_options.rag.top_k=5,10,20`.
Each configuration writes `<out>/screens/<arm>-<options hash>.json`.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import hydra
from omegaconf import DictConfig

from bench.answer.answer_prompt import load_answer_prompt
from bench.cli_errors import exit_on_errors
from bench.config import RunConfig
from bench.errors import BenchError
from bench.files import write_json_atomic
from bench.hashing import stable_hash
from bench.loaders import load_dataset
from bench.paths import CONF_DIR
from bench.run.arm_setup import open_arms
from bench.run.ingest import ingest_arms
from bench.run.pipeline import limit_dataset
from bench.run.settings import ArmSpec, arm_specs, launch, load_run_config
from bench.scoring import reach
from bench.scoring.miss import session_recall
from bench.tokens import TokenCounter
from bench.types import Context, Question


@dataclass(frozen=True)
class ScreenRow:
    """Reachability of one question's gold answer in one arm's context."""

    question_id: str
    """The question's id."""
    category: int
    """The question's dataset category."""
    evidence_recall: float | None
    """Share of evidence dia_ids among the retrieved sources; None without evidence or items."""
    gold_token_recall: float | None
    """Share of the gold answer's content tokens found in the context; None without gold terms."""
    context_tokens: int
    """Tokens in the arm's context block."""
    session_recall: float | None = None
    """Share of the evidence's sessions with a retrieved turn (bench.scoring.miss)."""


def evidence_recall(question: Question, context: Context) -> float | None:
    """|evidence ∩ retrieved ids| / |evidence|; None without evidence or retrieved items."""
    if not question.evidence or not context.items:
        return None
    retrieved = {sid for item in context.items for sid in item.source_ids}
    return sum(1 for e in question.evidence if e in retrieved) / len(question.evidence)


def gold_token_recall(question: Question, context: Context) -> float | None:
    """Share of the gold answer's stemmed content tokens present in the context."""
    return reach.gold_token_recall(question.gold, context.text)


def screen(cfg: RunConfig) -> dict[str, Any]:
    """Retrieve for every question with every arm; return per-arm means and rows."""
    from bench.providers.factory import build_providers

    specs = [read_only(spec) for spec in arm_specs(cfg)]
    load_answer_prompt(cfg.answer.prompt)  # fail early on a bad prompt path, like a run
    dataset = limit_dataset(load_dataset(cfg.dataset), cfg)
    providers = build_providers(cfg.provider, Path(cfg.out), answerer=False)  # nothing answers
    tokens = TokenCounter()
    rows: dict[str, list[ScreenRow]] = {s.name: [] for s in specs}
    arms = {}
    try:
        arms = open_arms(specs, cfg, providers, tokens, Path(cfg.out))
        for conversation in dataset.conversations:
            failed = ingest_arms(arms, conversation)
            if failed:
                raise BenchError(f"ingest failed: {failed}")
            for question in conversation.questions:
                for name, arm in arms.items():
                    rows[name].append(_screen_row(question, arm.retrieve(question), tokens))
    finally:
        for arm in arms.values():
            arm.close()
        providers.close()
    return {name: _summary(name, cfg, r) for name, r in rows.items()}


def read_only(spec: ArmSpec) -> ArmSpec:
    """Screens only read: switch off any reinforcement on retrieval (invariant 4)."""
    if getattr(spec.options, "reinforce_on_query", False):
        return replace(spec, options=replace(spec.options, reinforce_on_query=False))
    return spec


def _screen_row(question: Question, ctx: Context, tokens: TokenCounter) -> ScreenRow:
    return ScreenRow(
        question.question_id,
        question.category,
        evidence_recall(question, ctx),
        gold_token_recall(question, ctx),
        tokens.count(ctx.text),
        session_recall(question.evidence, [i for it in ctx.items for i in it.source_ids], 10**9),
    )


def _mean(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return round(sum(present) / len(present), 4) if present else None


def _summary(name: str, cfg: RunConfig, rows: list[ScreenRow]) -> dict[str, Any]:
    return {
        "arm": name,
        "options": cfg.arm_options[name],
        "n": len(rows),
        "evidence_recall": _mean([r.evidence_recall for r in rows]),
        "session_recall": _mean([r.session_recall for r in rows]),
        "gold_token_recall": _mean([r.gold_token_recall for r in rows]),
        "context_tokens_mean": _mean([float(r.context_tokens) for r in rows]),
        "rows": [asdict(r) for r in rows],
    }


@hydra.main(config_path=str(CONF_DIR), config_name="config", version_base="1.3")
def _hydra_main(cfg: DictConfig) -> None:
    with exit_on_errors():
        _screen_and_print(cfg)


def _screen_and_print(cfg: DictConfig) -> None:
    run_cfg = load_run_config(cfg)
    results = screen(run_cfg)
    print(f"{'arm':<14}{'n':>6}{'evidence recall':>17}{'gold-token recall':>19}{'ctx tokens':>12}")
    for name, res in results.items():
        path = Path(run_cfg.out) / "screens" / f"{name}-{stable_hash(res['options'])[:8]}.json"
        write_json_atomic(path, res)
        print(
            f"{name:<14}{res['n']:>6}{_fmt(res['evidence_recall']):>17}"
            f"{_fmt(res['gold_token_recall']):>19}{_fmt(res['context_tokens_mean']):>12}"
        )
    print(json.dumps({n: str(Path(run_cfg.out) / "screens") for n in results}), file=sys.stderr)
    from bench.run.sweep import record_sweep_job, screen_outcomes

    record_sweep_job("screen", screen_outcomes(results))  # in a -m sweep only


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def main() -> None:
    """Validate config-group choices, then hand over to Hydra."""
    launch(_hydra_main, __file__, job="screen")  # its log: <out>/screen.log, not the run's
