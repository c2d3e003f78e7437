"""Ingestion of one unit into every arm: side by side when an LLM extracts, health kept.

Extraction health (`bench.scoring.health`) comes from each arm's ingestion stats; every
ingested arm is then probed for what it stored (`bench.arm.probe`, retrieval health).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from bench.arm import Arm
from bench.arm.probe import probe_store, requested_k
from bench.config import RunConfig
from bench.errors import raise_if_permanent
from bench.rss import release_free_heap
from bench.run.outcome import RunOutcome
from bench.run.side_by_side import side_by_side
from bench.scoring import health as ext_health
from bench.scoring import retrieval_health as ret_health
from bench.types import Conversation

log = logging.getLogger("bench.run")


def ingest_arms(
    arms: dict[str, Arm],
    conversation: Conversation,
    health: ext_health.HealthTable | None = None,
    retrieval: ret_health.RetrievalTable | None = None,
    concurrency: int = 1,
) -> dict[str, str]:
    """Ingest the conversation into each arm; return {arm: error} for arms that failed.

    Arms that extract report their extraction health, kept in `health` (arm -> conversation);
    every ingested arm is probed (bench/arm/probe.py), kept in `retrieval`.
    With `concurrency` > 1 up to that many arms ingest at once, each in its own thread
    (an LLM extractor's calls overlap, and the identical ones of two arms are sent once:
    `bench.providers.openai_chat`); the results, log lines and health are still taken in
    arm order, so they read exactly as a serial ingestion's.
    """
    calls = {name: partial(_ingest_one, arm, conversation) for name, arm in arms.items()}
    if concurrency > 1 and len(arms) > 1:  # Ctrl-C still aborts every arm's ingestion
        done = side_by_side(calls, concurrency)
    else:
        done = {name: call() for name, call in calls.items()}
    failed = {}
    cid = conversation.conversation_id
    for name, got in done.items():
        if got.error is not None:  # an arm's failure is recorded, the run goes on
            raise_if_permanent(got.error)  # unless no re-run could fix it
            log.error("ingest %s/%s failed", name, cid, exc_info=got.error)
            failed[name] = f"ingest failed: {type(got.error).__name__}: {got.error}"
            continue
        log.info("ingest %s/%s %.1fs %s", name, cid, got.seconds, got.stats)
        found = ext_health.from_stats(got.stats) if isinstance(got.stats, dict) else None
        if found is not None and health is not None:
            health.setdefault(name, {})[cid] = found
        if retrieval is not None:
            ret_health.add_to(
                retrieval, name, cid, ingest_probe(arms[name], conversation, got.stats)
            )
    return failed


def ingest_probe(arm: Arm, conversation: Conversation, stats: object) -> ret_health.RetrievalHealth:
    """The retrieval-health entry of a fresh ingestion: turns, requested k, probe result."""
    found = probe_store(arm, conversation, stats)
    return ret_health.RetrievalHealth(
        requested_k=requested_k(arm),
        units=len(conversation.turns()),
        stored=found.stored if found else None,
        probe=found.method if found else "",
    )


def ingest_concurrency(cfg: RunConfig) -> int:
    """How many arms of one unit ingest at once: the extractor endpoint's concurrency.

    1 (one arm after another) with the offline extractor: its work is CPU under the GIL,
    and threads would only add switching.
    """
    extractor = cfg.provider.extractor
    return 1 if extractor.kind == "offline" else max(1, extractor.concurrency)


def arm_ingester(
    cfg: RunConfig, outcome: RunOutcome
) -> Callable[[dict[str, Arm], Conversation], dict[str, str]]:
    """`ingest_arms` at `ingest_concurrency(cfg)`, keeping health in `outcome`'s tables."""
    return partial(
        ingest_arms,
        health=outcome.health,
        retrieval=outcome.retrieval,
        concurrency=ingest_concurrency(cfg),
    )


@dataclass(frozen=True)
class _Ingested:
    """One arm's ingestion: its stats and wall time, or the exception it raised."""

    stats: object = None
    seconds: float = 0.0
    error: Exception | None = None


def _ingest_one(arm: Arm, conversation: Conversation) -> _Ingested:
    started = time.perf_counter()
    try:
        got = _Ingested(arm.ingest(conversation), time.perf_counter() - started)
    except Exception as exc:
        got = _Ingested(error=exc)
    release_free_heap()  # the next arm and the answering start from what is held
    return got
