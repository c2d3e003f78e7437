"""Run arms over suites, keeping ranked source ids and retrieval latency.

Each suite is ingested once per arm (checkpointed); every query is retrieved read-only
and its ranked source ids are kept up to the deepest cutoff (through the arm's
`rank_sources` when it offers one: bench/suite/ranking.py).

Stores live under `<out>/stores/<arm>/<suite>` exactly as in bench.run, so a second
suite run (or a sweep over retrieval knobs) reuses the ingestion.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from bench.answer.answer_step import AnswerStep
from bench.arm import Arm
from bench.config import RunConfig
from bench.errors import BenchError
from bench.files import remove_orphaned_temps
from bench.run.settings import ArmSpec
from bench.suite.config import SuiteConfig
from bench.suite.model import Suite, SuiteQuery
from bench.suite.ranking import rank
from bench.suite.units import suite_conversation
from bench.tokens import TokenCounter
from bench.types import Context, ContextItem, Conversation, Question, ServiceAnswer

if TYPE_CHECKING:
    from bench.providers.factory import ProviderSet

log = logging.getLogger("bench.suite")


@dataclass(frozen=True)
class Retrieved:
    """One arm's answer to one query: ranked unit ids (deduplicated, best first)."""

    suite: str
    """Name of the suite the query belongs to."""
    query: SuiteQuery
    """The query retrieved for."""
    ranked: tuple[str, ...]
    """Retrieved memory ids, deduplicated, best first (up to the largest cutoff)."""
    retrieve_ms: float
    """Wall time of the arm's retrieval (`rank_sources` when offered, else `retrieve`),
    in milliseconds."""
    answers: dict[int, tuple[str, dict[str, float | bool]]] | None = None
    """Per cutoff K: (answer, scores) when an answerer is configured."""
    write_path: str | None = None
    """A live arm's write path (`capture` or `remember`), from its context."""
    answer_path: str | None = None
    """Who answered: `service` (a live arm's answer endpoint), `harness` (the configured
    answerer), None when no answer was asked for."""


@dataclass(frozen=True)
class ArmRun:
    """Everything one arm produced over the suites."""

    arm: str
    """The arm's name."""
    kind: str
    """The arm's kind."""
    rows: tuple[Retrieved, ...]
    """One row per query, over every suite in order."""
    ingest_s: float
    """Total ingestion wall time over every suite, in seconds."""

    @property
    def write_path(self) -> str | None:
        """The live write path the arm reported (None for in-process arms)."""
        return next((r.write_path for r in self.rows if r.write_path), None)

    @property
    def answer_path(self) -> str | None:
        """`service` when any query was answered by the service, else `harness` or None."""
        paths = {r.answer_path for r in self.rows}
        return "service" if "service" in paths else next(iter(paths - {None}), None)


def run_suites(cfg: SuiteConfig, suites: list[Suite]) -> list[ArmRun]:
    """Ingest and retrieve with every configured arm; arms in the order requested.

    `phase=predict` stores the retrievals and returns no runs; `phase=evaluate` builds
    no arm and scores the stored ones (bench/suite/phased.py). Temp files a killed suite
    left in the stores are removed first (`bench.files.orphaned_temp`: only those whose
    writing process no longer runs).
    """
    from bench.providers.factory import build_providers
    from bench.run.phases import check_phase

    run_cfg = cfg.as_run_config(suites[0].name)
    phase = check_phase(run_cfg)
    for stores in {Path(cfg.out) / "stores", *([Path(cfg.stores)] if cfg.stores else [])}:
        remove_orphaned_temps(stores)  # a killed suite's temp files (their writer is gone)
    providers = build_providers(cfg.provider, Path(cfg.out), answerer=cfg.suite.answer)
    try:
        if phase == "predict":
            _predict(cfg, run_cfg, suites, providers)
            return []
        tokens = TokenCounter()
        answer_step = _answer_step(cfg, providers, tokens) if cfg.suite.answer else None
        if phase == "evaluate":
            return _evaluate(cfg, run_cfg, suites, answer_step)
        return _all(cfg, run_cfg, suites, providers, tokens, answer_step)
    finally:
        providers.close()


def _open(
    cfg: SuiteConfig, run_cfg: RunConfig, providers: ProviderSet, tokens: TokenCounter
) -> tuple[list[ArmSpec], dict[str, Arm]]:
    from bench.run.arm_setup import open_arms
    from bench.run.settings import arm_specs
    from bench.suite.screen import read_only

    specs = [read_only(spec) for spec in arm_specs(run_cfg)]
    stores = Path(cfg.stores) if cfg.stores else None
    return specs, open_arms(specs, run_cfg, providers, tokens, Path(cfg.out), stores)


def _all(
    cfg: SuiteConfig,
    run_cfg: RunConfig,
    suites: list[Suite],
    providers: ProviderSet,
    tokens: TokenCounter,
    answer_step: AnswerStep | None,
) -> list[ArmRun]:
    specs, arms = _open(cfg, run_cfg, providers, tokens)
    results: list[ArmRun] = []
    try:
        for spec in specs:
            arm = arms[spec.name]
            rows: list[Retrieved] = []
            ingest_s = 0.0
            for suite in suites:
                conversation = suite_conversation(suite)
                ingest_s += _ingest(arm, conversation)
                rows.extend(_retrieve_all(arm, suite, conversation, cfg, answer_step))
            results.append(ArmRun(spec.name, spec.kind, tuple(rows), ingest_s))
    finally:
        for arm in arms.values():
            arm.close()
    return results


def _predict(
    cfg: SuiteConfig, run_cfg: RunConfig, suites: list[Suite], providers: ProviderSet
) -> None:
    from bench.suite import phased

    _, arms = _open(cfg, run_cfg, providers, TokenCounter())
    try:
        for suite in suites:
            conversation = suite_conversation(suite)
            written = phased.predict_suite(
                arms,
                run_cfg,
                Path(cfg.out),
                suite,
                conversation,
                _ingest,
                keep_text=cfg.suite.answer,
            )
            log.info("predict %s: %d quer(ies) stored", suite.name, written)
    finally:
        for arm in arms.values():
            arm.close()


def _evaluate(
    cfg: SuiteConfig, run_cfg: RunConfig, suites: list[Suite], answer_step: AnswerStep | None
) -> list[ArmRun]:
    from bench.run.settings import arm_specs
    from bench.suite import phased

    out = Path(cfg.out)
    rows: dict[str, list[Retrieved]] = {name: [] for name in run_cfg.arms}
    ingest_s = dict.fromkeys(run_cfg.arms, 0.0)
    for suite in suites:
        conversation = suite_conversation(suite)
        stored = phased.stored_arms(run_cfg, out, suite, conversation)
        for name, arm in stored.items():
            ingest_s[name] += phased.stored_ingest_s(out, conversation, name)
            rows[name].extend(_retrieve_all(arm, suite, conversation, cfg, answer_step))
    return [
        ArmRun(spec.name, spec.kind, tuple(rows[spec.name]), ingest_s[spec.name])
        for spec in arm_specs(run_cfg)
    ]


def _ingest(arm: Arm, conversation: Conversation) -> float:
    started = time.perf_counter()
    try:
        stats = arm.ingest(conversation)
    except BenchError:
        raise
    except Exception as exc:
        raise BenchError(
            f"arm {arm.name}: ingest of suite {conversation.conversation_id} failed "
            f"({type(exc).__name__}: {exc}); see <out>/run.log"
        ) from exc
    seconds = time.perf_counter() - started
    log.info("ingest %s/%s %.2fs %s", arm.name, conversation.conversation_id, seconds, stats)
    return seconds


def _retrieve_all(
    arm: Arm,
    suite: Suite,
    conversation: Conversation,
    cfg: SuiteConfig,
    answer_step: AnswerStep | None,
) -> list[Retrieved]:
    depth = max(cfg.suite.cutoffs)
    texts = {t.dia_id: t.render() for t in conversation.turns()}
    rows = []
    for query, question in zip(suite.queries, conversation.questions, strict=True):
        got = rank(arm, question)
        ranked, context = got.ranked[:depth], got.context
        service = context.service_answer if context else None
        answers = None
        if answer_step is not None:
            answers = _answers(answer_step, question, ranked, texts, cfg.suite.cutoffs, service)
        path = None if answers is None else "service" if service else "harness"
        write_path = context.write_path if context else None
        rows.append(Retrieved(suite.name, query, ranked, got.ms, answers, write_path, path))
    return rows


def _answers(
    step: AnswerStep,
    question: Question,
    ranked: tuple[str, ...],
    texts: dict[str, str],
    cutoffs: list[int],
    service_answer: ServiceAnswer | None = None,
) -> dict[int, tuple[str, dict[str, float | bool]]]:
    """The answerer sees the top-K memories (best first) for each cutoff K.

    A live arm that brought the service's own answer is scored with that one answer
    at every cutoff (the service chose its own context; no answerer is asked).
    """
    out = {}
    for k in cutoffs:
        items = tuple(ContextItem(texts[i], 0.0, (i,)) for i in ranked[:k])
        context = Context(
            text="\n".join(it.text for it in items), items=items, service_answer=service_answer
        )
        result = step.answer(question, context, 0.0)
        scores = {
            "f1": float(result.scores.get("f1", 0.0)),
            "em": bool(result.scores.get("em", False)),
            "correct": bool(result.correct),
        }
        out[k] = (result.answer or "", scores)
    return out


def _answer_step(cfg: SuiteConfig, providers: ProviderSet, tokens: TokenCounter) -> AnswerStep:
    from bench.answer.answer_prompt import load_answer_prompt

    return AnswerStep(
        prompt=load_answer_prompt(cfg.answer.prompt),
        answerer=providers.answerer,
        tokens=tokens,
        f1_threshold=0.5,
    )
