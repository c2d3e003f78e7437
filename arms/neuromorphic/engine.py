"""The neuromorphic memory engine: a reusable conversational memory (methodology §4).

    from arms.neuromorphic import MemoryEngine
    with MemoryEngine("memstore", embedder, conversation_id="alice") as memory:
        memory.process_turn("Alice", "I moved to Berlin last month.", date_time="8 May 2023")
        print(memory.render(memory.recall("Where does Alice live?")))

Per exchange (`process_exchange`): advance the clock; retrieve against the exchange
(remembering what came back); extract facts; archive each, supersede what it overrides,
insert it at w = 1; prune by decayed weight; consolidate every `consolidate_every`
turns; reinforce what was retrieved (LTP). New facts go to SQLite (and FTS5, and the
engine's `KeywordSearch`) at once; events are written and committed every `flush_every`
exchanges, and every `hot_sync_every` flushes (and on `flush()`/`close()`) the hot set's
changed records go to LanceDB in one batch. Every state change is an event in the
append-only archive, so reopening, resuming and rollback rebuild the same state.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from arms.neuromorphic import consolidation, decay, grounding, ltp, pruning
from arms.neuromorphic.answer_gate import gate_note
from arms.neuromorphic.archive import ColdArchive
from arms.neuromorphic.archive_index import day_of
from arms.neuromorphic.config import NeuromorphicConfig
from arms.neuromorphic.exchange import Exchange, exchanges
from arms.neuromorphic.extraction import Extraction, Extractor
from arms.neuromorphic.extractors import make_extractor
from arms.neuromorphic.hydration import hydrate
from arms.neuromorphic.invalidation import supersede_targets
from arms.neuromorphic.keyword_index import KeywordSearch
from arms.neuromorphic.records import Fact, FactDraft, FactRow, Recalled, entity_key
from arms.neuromorphic.render import render_facts
from arms.neuromorphic.retrieval import Hit, archived_fact, hit_fact, recall, recall_hits
from arms.neuromorphic.rollback import live_events, replay, tally
from arms.neuromorphic.state import INDEX_KINDS
from bench.providers.base import Embedder
from bench.types import Conversation, Turn

if TYPE_CHECKING:
    from arms.neuromorphic.hotstore import HotStore

COUNTERS = ("exchanges", "facts", "superseded", "pruned_deleted", "pruned_archived", "reinforced",
            "elevated", "links_dropped", "extraction_errors", "exchanges_failed",
            "extract_prompt_tokens", "extract_completion_tokens", "via_tools", "via_json_schema",
            "tools_ignored", "facts_duplicate", "facts_ungrounded")  # fmt: skip


class MemoryEngine:
    """A persistent neuromorphic memory for one agent and conversation scope."""

    def __init__(
        self,
        path: Path | str,
        embedder: Embedder,
        config: NeuromorphicConfig | None = None,
        *,
        extractor: Extractor | None = None,
        agent_id: str | None = None,
        conversation_id: str = "default",
        hot_uri: str | None = None,
        read_only: bool = False,
    ) -> None:
        self.path = Path(path)
        self.config = config or NeuromorphicConfig()
        self.embedder = embedder
        self.extractor = extractor or make_extractor(None)
        self.scope = (agent_id or self.config.agent_id, conversation_id)
        self.archive = ColdArchive(self.path / "archive.sqlite", *self.scope)
        self.keywords = KeywordSearch(self.archive)
        self._hot_uri = hot_uri or str(self.path / "hot.lance")
        self._hot: HotStore | None = None
        self._hot_trusted = not read_only
        self._lambdas = decay.tier_lambdas(self.config)
        self._pending: list[tuple[int, str, dict[str, Any]]] = []
        self._pending_facts: list[FactRow] = []
        self.timings = {"extract": 0.0, "embed": 0.0, "recall": 0.0}
        """Wall seconds in extractor, embedder (outside engine time) and ingest retrieval."""
        self._open(read_only)

    # ---- opening and persistence ----------------------------------------------------
    @property
    def hot(self) -> HotStore:
        """The LanceDB hot store, opened on first use (importing lancedb costs ~2 s of CPU)."""
        if self._hot is None:
            from arms.neuromorphic.hotstore import HotStore

            self._hot = HotStore(self._hot_uri, self.embedder.dim)
        return self._hot

    def _open(self, read_only: bool) -> None:
        """Load the hot set from LanceDB when in sync, else replay the archive.

        From LanceDB only the events the archive index needs are read and replayed
        (`INDEX_KINDS`); otherwise every event is, and the hot table is rewritten.
        `read_only` (a complete store opened to be read) replays every event and never
        touches LanceDB: the archive is the source of truth, and replaying it costs less
        than importing lancedb. Should such an engine write after all, its first hot
        sync rewrites the scope (`_hot_trusted`), so an unchecked table is never appended to.
        """
        facts, meta = self.archive.facts(), self.archive.meta()
        self.counters: dict[str, int] = {c: 0 for c in COUNTERS} | meta.get("counters", {})
        last_seq = self.archive.last_seq()
        hot = None if read_only else self.hot  # a writer creates the table up front
        loaded = hot.load(*self.scope) if hot is not None and last_seq else None
        if loaded and meta.get("hot_synced_seq") == last_seq and meta.get("hot_seq") == loaded[1]:
            events = self.archive.events(INDEX_KINDS)
            self.state = replay(events, facts, self.embedder.dim, hot=False, source=self.archive)
            self.state.adopt(loaded[0])
            self.loaded_from = "lancedb"
        else:
            events = self.archive.events()
            self.state = replay(events, facts, self.embedder.dim, source=self.archive)
            self.loaded_from = "archive"
            if events and not read_only:
                self._sync_hot(replace=True)
            self.state.ws.dirty.clear()
        live = live_events(events)
        self.turn = max((e.turn for e in live if e.kind == "exchange"), default=0)

    def _sync_hot(self, *, replace: bool = False) -> None:
        """Write the hot set to LanceDB (changed records, or all) and note the sync point.

        `hot_synced_seq` is the archive event the hot table reflects; `hot_seq` the seq
        its newest rows carry, checked on open so that a table dropped or rewritten
        elsewhere is rebuilt from the archive rather than trusted.
        """
        ws, seq = self.state.ws, self.archive.last_seq()
        written = {}
        replace = replace or not self._hot_trusted
        self._hot_trusted = True
        if replace:
            self.hot.replace(*self.scope, ws, seq)
            written = {"hot_seq": seq if ws.alive[: ws.n].any() else 0}
        elif ws.dirty:
            self.hot.sync(*self.scope, ws, ws.dirty, seq)
            written = {"hot_seq": seq}
        ws.dirty.clear()
        self.archive.set_meta({"hot_synced_seq": seq, **written})
        self.archive.commit()

    def flush(self) -> None:
        """Commit the archive, then append the hot set's changes to LanceDB in one batch.

        A no-op when nothing changed, so a store opened only to read is never written.
        """
        self._commit(hot=True)

    def _commit(self, *, hot: bool) -> None:
        """Commit the archive; with `hot`, also write the hot set's changes to LanceDB.

        Between hot writes the changed ids accumulate in `ws.dirty` (one row per record
        however often it changed) and the sync point stays behind, so reopening then
        replays the archive: the same state, only slower.
        """
        if not (self._pending or self.archive.in_transaction or (hot and self.state.ws.dirty)):
            return
        self._write_pending()
        self.archive.set_meta({"counters": self.counters, "turn": self.turn})
        self.archive.commit()
        if hot:
            self._sync_hot()
            self.hot.maybe_compact(self.config.compact_every)
        self.state.ws.compact()

    def close(self) -> None:
        """Flush and close the stores."""
        self.flush()
        self.archive.close()

    def abort(self) -> None:
        """Discard everything since the last flush and close (after a failure)."""
        self._pending, self._pending_facts = [], []
        self.archive.close()

    def __enter__(self) -> MemoryEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close() if exc[0] is None else self.abort()

    # ---- events ---------------------------------------------------------------------
    def _emit(
        self, t: int, kind: str, payload: dict[str, Any], facts: Sequence[FactRow] = ()
    ) -> None:
        self._pending.append((t, kind, payload))
        self._pending_facts.extend(facts)
        self.state.update(t, kind, payload, {f.id: f for f in facts} if facts else {})

    def _write_pending(self) -> None:
        self._write(self._pending, self._pending_facts)
        self._pending, self._pending_facts = [], []

    def _write(self, events: list[tuple[int, str, dict[str, Any]]], facts: list[FactRow]) -> None:
        """Append to the archive; facts are reported to the in-memory keyword index."""
        self.archive.write(events, facts)
        self.keywords.written(facts)
        self.state.index.facts.settle()  # read back from the archive from now on

    def _write_facts(self) -> None:
        """Write the pending facts only: keyword search must see them from the next read on.

        Events are read only on open and rewind, so they wait for the commit and go to
        SQLite in one batch per flush interval (the same transaction either way).
        """
        self._write([], self._pending_facts)
        self._pending_facts = []

    def _embed(self, texts: list[str]) -> np.ndarray:
        start = time.perf_counter()
        vectors = np.asarray(self.embedder.embed(texts), dtype=np.float32)
        self.timings["embed"] += time.perf_counter() - start
        return vectors

    def weights(self, t: int | None = None) -> np.ndarray:
        """Current weights of every working-set row at turn `t` (default: now)."""
        ws = self.state.ws
        n = ws.n
        return decay.weights(
            ws.w[:n], ws.tier[:n], ws.k[:n], ws.reinforced[:n], ws.invalid_at[:n],
            self.turn if t is None else t, self._lambdas, self.config.eta,
        )  # fmt: skip

    # ---- one exchange ---------------------------------------------------------------
    def process_exchange(self, exchange: Exchange) -> dict[str, Any]:
        """Run one clock tick of the engine on an exchange; return what it did."""
        cfg = self.config
        self.turn += 1
        t = self.turn
        turns = [[turn.dia_id, turn.render()] for turn in exchange.turns]
        self._emit(t, "exchange", {"date_time": exchange.date_time, "turns": turns})
        retrieved: list[Hit] = []
        weights = self.weights(t)
        if cfg.retrieve_during_ingest:
            text = exchange.text()
            qvec = self._embed([text])[0]
            start = time.perf_counter()
            retrieved = recall_hits(self.state, self.keywords, cfg, text, qvec, weights)
            self.timings["recall"] += time.perf_counter() - start
        shown = retrieved[: cfg.extractor_context_k]  # only these are viewed
        known = [hit_fact(self.state, hit, weights) for hit in shown]
        extraction = self._extract(exchange, known)
        self._store(extraction.facts, exchange, t)
        if cfg.prune:
            self._prune(t, weights)
        if cfg.consolidation and t % cfg.consolidate_every == 0:
            self._consolidate(t)
        if cfg.ltp and retrieved:
            self._reinforce([hit.id for hit in retrieved], t)
        self.counters["exchanges"] += 1
        self._write_facts()
        flushed = t % cfg.flush_every == 0
        if flushed:
            self._commit(hot=(t // cfg.flush_every) % cfg.hot_sync_every == 0)
        return {"turn": t, "facts": len(extraction.facts), "errors": len(extraction.errors),
                "retrieved": len(retrieved), "flushed": flushed}  # fmt: skip

    def process_turn(
        self,
        speaker: str,
        text: str,
        *,
        date_time: str,
        replies: Sequence[tuple[str, str]] = (),
        session: int = 1,
    ) -> dict[str, Any]:
        """Process one utterance (and any replies) as an exchange dated `date_time`."""
        t = self.turn + 1
        said = [(speaker, text), *replies]
        turns = tuple(Turn(s, x, f"T{t}:{i + 1}", session) for i, (s, x) in enumerate(said))
        return self.process_exchange(Exchange(session, date_time, turns))

    def ingest(self, conversation: Conversation) -> dict[str, Any]:
        """Process every exchange of a conversation not yet processed; flush; return stats."""
        for exchange in exchanges(conversation)[self.turn :]:
            self.process_exchange(exchange)
        self.flush()
        return self.stats()

    def _extract(self, exchange: Exchange, known: list[Fact]) -> Extraction:
        start = time.perf_counter()
        extraction = self.extractor.extract(exchange, known[: self.config.extractor_context_k])
        self.timings["extract"] += time.perf_counter() - start
        if extraction.errors:
            rows = [(e.kind, e.message, e.raw) for e in extraction.errors]
            self.archive.add_errors(self.turn, rows)
        self.counters["extraction_errors"] += len(extraction.errors)
        self.counters["exchanges_failed"] += bool(extraction.errors)
        for key, n in grounding.extraction_counts(extraction, exchange).items():
            self.counters[key] += n
        self.counters["extract_prompt_tokens"] += extraction.usage.prompt_tokens
        self.counters["extract_completion_tokens"] += extraction.usage.completion_tokens
        return extraction

    def _store(self, drafts: Sequence[FactDraft], exchange: Exchange, t: int) -> None:
        if not drafts:
            return
        vectors = self._embed([d.fact_content for d in drafts])
        session_day = day_of(exchange.date_time)
        for draft, vector in zip(drafts, vectors, strict=True):
            if self.config.override:
                replaced = supersede_targets(self.state.index, draft)
                if replaced:
                    self._emit(t, "supersede", {"ids": replaced})
                    self.counters["superseded"] += len(replaced)
            fact = FactRow(
                self.archive.new_fact_id(), t, draft.entity_name, draft.fact_content,
                draft.memory_type, draft.related_entities, draft.valid_date or session_day,
                draft.source_ids or exchange.dia_ids(), vector,
            )  # fmt: skip
            self._emit(t, "insert", {"ids": [fact.id]}, [fact])
            self.counters["facts"] += 1

    def _prune(self, t: int, before: np.ndarray) -> None:
        """Prune by the weights at `t`, without a second pass over the hot set.

        `before` holds this turn's weights taken before the new facts; rows inserted
        since weigh w·exp(−λ·0) = 1.0, and supersession at `t` freezes a weight at its
        value at `t`, so `before` (extended by 1.0, see `prune_plan`) equals a fresh
        evaluation.
        """
        delete, archive = pruning.prune_plan(self.state.ws, before, self.config.w_prune)
        if archive:
            self._emit(t, "archive", {"ids": archive})
            self.counters["pruned_archived"] += len(archive)
        if delete:
            self._emit(t, "delete", {"ids": delete})
            self.counters["pruned_deleted"] += len(delete)

    def _consolidate(self, t: int) -> None:
        ws = self.state.ws
        elevate = consolidation.elevation_targets(ws, self.config.elevate_k)
        if elevate:
            self._emit(t, "elevate", {"ids": elevate})
            self.counters["elevated"] += len(elevate)
        window = np.flatnonzero(ws.created[: ws.n] > t - self.config.consolidate_every)
        recent = [ws.ids[r] for r in window[ws.alive[window]].tolist()]
        links = consolidation.dead_links(ws, self.state.index, recent)
        if links:
            before = sum(len(ws.related[ws.row_of[int(i)]]) for i in links)
            self._emit(t, "relink", {"links": links})
            self.counters["links_dropped"] += before - sum(len(v) for v in links.values())

    def _reinforce(self, ids: list[int], t: int) -> None:
        targets = ltp.ltp_targets(self.state.ws, ids)
        if targets:
            self._emit(t, "reinforce", {"ids": targets})
            self.counters["reinforced"] += len(targets)

    # ---- reading --------------------------------------------------------------------
    def _recall(self, query: str, qvec: np.ndarray) -> list[Recalled]:
        return recall(self.state, self.keywords, self.config, query, qvec, self.weights())

    def recall(self, query: str, *, reinforce: bool | None = None) -> list[Recalled]:
        """Facts relevant to `query`, best first; changes nothing unless reinforcing."""
        self._write_pending()
        found = self._recall(query, self._embed([query])[0])
        wanted = self.config.reinforce_on_query if reinforce is None else reinforce
        if wanted and self.config.ltp and found:
            self._reinforce([r.fact.id for r in found], self.turn)
            self._write_pending()
        return found

    def render(self, recalled: list[Recalled], query: str | None = None) -> str:
        """The `<FACTS>` block: validity windows, hydrated sources, answer-type rule."""
        cfg = self.config
        sources: dict[int, list[str]] = {}
        if cfg.hydration and query is not None:
            sources = hydrate(
                recalled, self.state.index, query, cfg.hydrate_top_k, cfg.hydrate_full_k
            )
        note = gate_note(query) if cfg.answer_type_gate and query else None
        return render_facts(recalled, self.state.index.turn_date, sources, note)

    def history(self, entity_name: str) -> list[Fact]:
        """Every archived fact of an entity, oldest first, superseded ones included."""
        index = self.state.index
        ids = index.by_entity.get(entity_key(entity_name), [])
        return [archived_fact(self.state, fid) for fid in ids]

    def rollback(self, turn: int) -> None:
        """Return to the state right after exchange `turn`, replaying the archive.

        State counters are recounted from the replayed timeline; extraction errors and
        token counts record extractor calls actually made, so they are kept.
        """
        if not 0 <= turn <= self.turn:
            raise ValueError(f"rollback: turn must be within 0..{self.turn}, got {turn}")
        self._rewind({"to_turn": turn})

    def restore(self, seq: int) -> None:
        """Return to the state right after archive event `seq` (later events stay logged)."""
        self._write_pending()
        if not 0 <= seq <= self.archive.last_seq():
            raise ValueError(f"restore: seq must be within 0..{self.archive.last_seq()}")
        self._rewind({"to_seq": seq})

    def _rewind(self, payload: dict[str, int]) -> None:
        self.flush()
        self.archive.write([(self.turn, "rollback", payload)], [])
        self.archive.commit()
        events, facts = self.archive.events(), self.archive.facts()
        self.state = replay(events, facts, self.embedder.dim, source=self.archive)
        live = live_events(events)
        self.turn = max((e.turn for e in live if e.kind == "exchange"), default=0)
        self.counters |= tally(events, facts)
        self.archive.set_meta({"turn": self.turn, "counters": self.counters})
        self._sync_hot(replace=True)

    def stats(self) -> dict[str, Any]:
        """Counters plus the current sizes of the hot set and the archive."""
        ws = self.state.ws
        return {
            **self.counters,
            "turn": self.turn,
            "hot_valid": int(ws.valid_mask().sum()),
            "hot_rows": int(ws.alive[: ws.n].sum()),
            "archived_facts": len(self.state.index),
        }
