"""The `neuromorphic` and `tuned` arms: the memory engine run over each conversation.

One engine store per conversation under `store_dir/<conversation_id>/`, ingested one
exchange per clock tick and checkpointed after every flush, so an interrupted
ingestion resumes mid-conversation and a complete store is reopened, not rebuilt.
`retrieve` only reads (unless `reinforce_on_query`), so a resumed run reproduces an
uninterrupted one. With `reinforce_on_query`, question-time LTP is persisted, but a
later run reusing the store first voids everything logged after ingestion completed,
so every run answers from the same post-ingestion state. The context block the answerer sees::

    <FACTS>
    - Caroline went to a LGBTQ support group yesterday (7 May 2023). (valid 8 May 2023 – present)
      > (8 May 2023) Caroline: I went to a LGBTQ support group yesterday.
    - Caroline: The transgender stories were so inspiring! (valid 8 May 2023 – present)
    </FACTS>
    <ANSWER_TYPE>The question asks for a date. Answer with the calendar date ...</ANSWER_TYPE>
"""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import asdict
from pathlib import Path
from typing import Any

from arms.neuromorphic.answer_gate import answer_type
from arms.neuromorphic.config import NeuromorphicConfig
from arms.neuromorphic.engine import MemoryEngine
from arms.neuromorphic.exchange import exchanges
from arms.neuromorphic.extractors import make_extractor
from arms.neuromorphic.records import Recalled
from arms.neuromorphic.store_check import counter_problem, file_problem
from bench import __version__
from bench.arm import ArmServices
from bench.arm.checkpoint import IngestCheckpoint, source_hash
from bench.errors import BenchError
from bench.files import write_json_atomic
from bench.hashing import stable_hash_lists
from bench.paths import contained, safe_name
from bench.types import AskedQuestion, Context, ContextItem, Conversation, ranked_ids

ENGINE_MODULES = (
    "answer_gate",
    "archive",
    "archive_index",
    "arm",
    "config",
    "consolidation",
    "cut_reply",
    "decay",
    "dry_extract",
    "engine",
    "exchange",
    "extract_llm",
    "extract_rules",
    "extraction",
    "extractors",
    "fusion",
    "grounding",
    "hotstore",
    "hydration",
    "invalidation",
    "keyword_index",
    "ltp",
    "pruning",
    "records",
    "render",
    "retrieval",
    "rollback",
    "spreading",
    "state",
    "store_check",
    "vector_file",
    "vectors",
    "workingset",
)
SHARED_MODULES = (
    "bench.text",
    "bench.dates",
    "bench.types",
    "bench.providers.offline_embed",
    "bench.wordllama_files",
)
"""Modules outside the engine that ingestion depends on: tokenising, session dates,
relative dates, `Turn.render`, and the offline embedder (its tokenizer and weights files)."""
MAX_OPEN = 8
"""Engines kept open at once (LongMemEval has one store per question)."""


def _silent(arm: str, unit: str, done: int, total: int, facts: int) -> None:
    """No one listens to the ingestion progress."""


def hashed_modules() -> tuple[str, ...]:
    """Every module whose source is part of the code hash, by dotted name."""
    return tuple(f"arms.neuromorphic.{m}" for m in ENGINE_MODULES) + SHARED_MODULES


def code_hash() -> str:
    """Hash of the engine's and its ingestion dependencies' source (checkpoint fingerprint)."""
    return source_hash(*hashed_modules())


def conversation_hash(conversation: Conversation) -> str:
    """Hash of what ingestion reads from a conversation (turns, speakers, dates).

    `stable_hash([speakers, [(index, date_time, turns) per session]])`, fed a session at
    a time (`stable_hash_lists`, the same digest): the JSON of a 10M-token conversation
    is never held whole (it was, ~66 MB for a moment at the start of ingestion).
    """
    sessions = ((s.index, s.date_time, [asdict(t) for t in s.turns]) for s in conversation.sessions)
    return stable_hash_lists([conversation.speakers, sessions])


class NeuromorphicArm:
    """The neuromorphic memory engine as a benchmark arm."""

    def __init__(self, name: str, config: NeuromorphicConfig, services: ArmServices) -> None:
        self.name = name
        self.config = config
        self.services = services
        self.extractor = make_extractor(services.extractor, services.extract_mode)
        self._engines: OrderedDict[str, MemoryEngine] = OrderedDict()
        self._folders: dict[str, Path] = {}

    def fingerprint(self) -> dict[str, Any]:
        """Params, embedder, extractor, armbench version and engine code hash."""
        return {
            "params": asdict(self.config),
            "embedder": self.services.embedder.model,
            "embedder_dim": self.services.embedder.dim,
            "extractor": self.extractor.model,
            "extractor_version": self.extractor.version,
            "armbench": __version__,
            "code": code_hash(),
        }

    def _folder(self, conversation_id: str) -> Path:
        root = self.services.store_dir
        return contained(root / safe_name(conversation_id), root)

    def _open(self, conversation_id: str, folder: Path, *, complete: bool = False) -> MemoryEngine:
        """Open a store; a complete one that questions never reinforce opens read-only.

        Read-only (MemoryEngine `read_only`) rebuilds the hot set from the archive
        without importing lancedb; retrieval is the same either way.
        """
        engine = MemoryEngine(
            folder,
            self.services.embedder,
            self.config,
            extractor=self.extractor,
            conversation_id=conversation_id,
            read_only=complete and not self.config.reinforce_on_query,
        )
        self._engines[conversation_id] = engine
        while len(self._engines) > MAX_OPEN:
            self._engines.popitem(last=False)[1].close()
        return engine

    def ingest(self, conversation: Conversation) -> dict[str, Any]:
        """Build, resume or reopen this conversation's store; return ingestion stats."""
        cid = conversation.conversation_id
        if cid in self._engines:
            self._engines.pop(cid).close()
        folder = self._folder(cid)
        fingerprint = {**self.fingerprint(), "conversation": conversation_hash(conversation)}
        checkpoint = IngestCheckpoint(folder, fingerprint, root=self.services.store_dir)
        saved = checkpoint.load()
        start = time.perf_counter()
        saved, engine = self._open_verified(cid, folder, checkpoint, saved)
        self._drop_query_reinforcement(engine, saved)
        todo = exchanges(conversation)
        resumed_from = engine.turn
        report = self.services.progress or _silent
        done = engine.turn
        try:
            report(self.name, cid, done, len(todo), engine.counters["facts"])
            for exchange in todo[engine.turn :]:
                if engine.process_exchange(exchange)["flushed"]:
                    checkpoint.save({**engine.stats(), "exchanges_total": len(todo)})
                done = engine.turn
                report(self.name, cid, done, len(todo), engine.counters["facts"])
            engine.flush()
        except BaseException:
            report(self.name, cid, done, done, engine.counters["facts"])  # stopped early
            self._engines.pop(cid, None)
            engine.abort()
            raise
        errors_file = contained(folder / "extraction_errors.json", self.services.store_dir)
        write_json_atomic(errors_file, engine.archive.errors())
        stats = {
            **engine.stats(),
            "exchanges_total": len(todo),
            "resumed_from": resumed_from,
            "reopened": bool(saved and saved.get("complete")) and resumed_from == len(todo),
            "ingest_s": round(time.perf_counter() - start, 3),
            "extract_s": round(engine.timings["extract"], 3),
            "embed_s": round(engine.timings["embed"], 3),
            "store": engine.loaded_from,
            "ingested_seq": engine.archive.last_seq(),
        }
        checkpoint.save(stats, complete=True)
        self._folders[cid] = folder
        return stats

    def _open_verified(
        self, cid: str, folder: Path, checkpoint: IngestCheckpoint, saved: dict[str, Any] | None
    ) -> tuple[dict[str, Any] | None, MemoryEngine]:
        """Open the store; one that disagrees with its checkpoint is rebuilt from zero."""
        problem = file_problem(folder, saved) if saved else None
        if problem is None:
            engine = self._open(cid, folder, complete=bool(saved and saved.get("complete")))
            problem = counter_problem(engine.stats(), saved) if saved else None
            if problem is None:
                return saved, engine
            self._engines.pop(cid).close()
        checkpoint.wipe(problem)
        return None, self._open(cid, folder)

    def _drop_query_reinforcement(self, engine: MemoryEngine, saved: dict[str, Any] | None) -> None:
        """Return a complete store to its post-ingestion state if questions reinforced it.

        With `reinforce_on_query`, `retrieve` persists LTP; a later run reusing the store
        must start from what ingestion alone built, so the events logged after ingestion
        (`ingested_seq`) are voided by a `rollback {to_seq}` (kept in the log).
        """
        if not (self.config.reinforce_on_query and saved and saved.get("complete")):
            return
        pristine = saved.get("ingested_seq")
        if isinstance(pristine, int) and engine.archive.last_seq() > pristine:
            engine.restore(pristine)

    def _engine(self, conversation_id: str) -> MemoryEngine:
        if conversation_id in self._engines:
            self._engines.move_to_end(conversation_id)
            return self._engines[conversation_id]
        if conversation_id not in self._folders:
            raise BenchError(
                f"arm {self.name}: conversation {conversation_id} was not ingested; "
                "call ingest(conversation) before retrieve"
            )
        return self._open(conversation_id, self._folders[conversation_id], complete=True)

    def _recall(self, question: AskedQuestion) -> tuple[MemoryEngine, list[Recalled]]:
        """The question's facts, best first (persisted first if reinforce_on_query)."""
        engine = self._engine(question.conversation_id)
        recalled = engine.recall(question.question)
        if self.config.reinforce_on_query:
            engine.flush()
        return engine, recalled

    def rank_sources(self, question: AskedQuestion) -> tuple[str, ...]:
        """`retrieve(question).ranked_source_ids()` without rendering the context.

        Suites rank source ids and never read the `<FACTS>` text (bench/suite/ranking.py),
        so they skip hydration and rendering; the recall, and so the ranking, is the same.
        """
        _, recalled = self._recall(question)
        return tuple(ranked_ids(r.fact.source_ids for r in recalled))

    def retrieve(self, question: AskedQuestion) -> Context:
        """The `<FACTS>` context for a question (reads only unless reinforce_on_query)."""
        engine, recalled = self._recall(question)
        text = engine.render(recalled, question.question)
        items = tuple(
            ContextItem(r.fact.fact_content, r.score, r.fact.source_ids, kind="fact")
            for r in recalled
        )
        found_by = dict.fromkeys(("hot", "graph", "cold"), 0)
        for r in recalled:
            for name in r.found_by:
                found_by[name] += 1
        kind = answer_type(question.question) if self.config.answer_type_gate else None
        meta = {
            "facts": len(recalled),
            "found_by": found_by,
            "turn": engine.turn,
            "answer_type": kind[0] if kind else None,
            "reinforced": self.config.reinforce_on_query,
        }
        return Context(text=text, items=items, meta=meta)

    def close(self) -> None:
        """Flush and close every open engine."""
        while self._engines:
            self._engines.popitem()[1].close()
