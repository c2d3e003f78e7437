"""The reference memory service: one neuromorphic engine store per namespace (project).

Both front ends (REST in `arms.server.rest`, MCP in `arms.server.mcp_tools`) call this
class, so they serve the same data. Projects live under `<data>/projects/<id>/` with a
registry in `<data>/projects.json`; a restarted server reopens them. One lock
serialises every engine call: the engine is single-threaded by design, and a
benchmark's ranked retrieval must not depend on request interleaving.

Two write paths, because they measure different things:

* `capture` — the engine's own path: an exchange of dated turns goes through the
  extractor (facts, supersession, decay, consolidation), exactly as the in-process
  `neuromorphic` arm ingests it, so search results equal that arm's.
* `remember` — raw storage: the text is stored verbatim as one memory (no extraction).

Every memory carries the benchmark marker it was written with (`metadata.bench`, or
`[bench:<id>]` in the text): search returns it as `source_ids`, so a client maps
results back to its own units however the engine merges or splits them.
"""

from __future__ import annotations

import re
import shutil
import threading
import uuid
from collections import Counter, OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from arms.neuromorphic.config import NeuromorphicConfig
from arms.neuromorphic.engine import MemoryEngine
from arms.neuromorphic.exchange import Exchange
from arms.neuromorphic.extraction import Extraction, Extractor
from arms.neuromorphic.extractors import make_extractor
from arms.neuromorphic.records import Fact, FactDraft, Tier
from bench.errors import BenchError
from bench.files import write_json_atomic
from bench.paths import contained, safe_name
from bench.providers.base import Embedder
from bench.types import Turn
from bench.untrusted import read_json_object

MARKER = re.compile(r"\[bench:([^\]\s]+)\]")
"""The benchmark marker a client may put in a memory's text."""
MAX_OPEN = 8
"""Engines kept open at once; others are reopened from disk on use."""
PROJECT_ID = re.compile(r"^[a-f0-9]{16}$")


class UnknownProject(BenchError):
    """A request named a project id this service does not hold."""


@dataclass(frozen=True)
class Message:
    """One turn sent to the capture path; `id` is the client's unit id (the marker)."""

    speaker: str
    """Who said the turn."""
    text: str
    """The turn's text."""
    id: str | None = None
    """The client's unit id (kept as the marker); None gets a server-made `T<n>:<i>` id."""
    image_caption: str | None = None
    """Caption of an image shared in the turn; None when there is none."""


@dataclass(frozen=True)
class Hit:
    """One search result: a stored memory, its score and the markers it came from."""

    id: str
    """The stored memory's (engine fact's) id."""
    text: str
    """The memory's text."""
    score: float
    """The engine's recall score; hits come best first."""
    source_ids: tuple[str, ...]
    """Markers (client unit ids) of the turns the memory came from."""


@dataclass(frozen=True)
class SearchResult:
    """Ranked hits plus the context block the engine renders for the query."""

    hits: tuple[Hit, ...]
    """The ranked hits, best first."""
    context: str
    """The context block the engine renders for the query from what it recalled."""

    def to_json(self) -> dict[str, object]:
        """The wire form: `results[]` (id, text, score, source_ids, metadata.bench), `context`."""
        results = [
            {
                "id": h.id,
                "text": h.text,
                "score": h.score,
                "source_ids": list(h.source_ids),
                "metadata": {"bench": list(h.source_ids)},
            }
            for h in self.hits
        ]
        return {"results": results, "context": self.context}


class VerbatimExtractor:
    """The `remember` path: the text itself becomes one memory, no extraction.

    Each memory gets its own entity name, so one raw memory never supersedes another.
    """

    model = "verbatim"
    version = "1"

    def __init__(self, memory_id: str, markers: tuple[str, ...]) -> None:
        self.memory_id = memory_id
        self.markers = markers

    def extract(self, exchange: Exchange, known: Sequence[Fact]) -> Extraction:
        """One ActiveContext draft holding the whole text, sourced to its markers."""
        text = "\n".join(t.text for t in exchange.turns)
        draft = FactDraft(f"memory {self.memory_id}", text, Tier.ACTIVE, source_ids=self.markers)
        return Extraction(facts=(draft,))


def now_stamp() -> str:
    """Today's date in the datasets' session-date style (`8 May 2023`), for undated writes."""
    today = datetime.now(UTC)
    return f"{today.day} {today.strftime('%B %Y')}"


class MemoryService:
    """Namespaced neuromorphic memory stores behind one lock, with per-endpoint call counts."""

    def __init__(
        self,
        data_dir: Path,
        embedder: Embedder,
        config: NeuromorphicConfig | None = None,
        extractor: Extractor | None = None,
    ) -> None:
        self.data_dir = data_dir
        self.embedder = embedder
        self.config = config or NeuromorphicConfig()
        self.extractor = extractor or make_extractor(None)
        self.calls: Counter[str] = Counter()
        self._lock = threading.RLock()
        self._engines: OrderedDict[str, MemoryEngine] = OrderedDict()
        self._registry = data_dir / "projects.json"
        data_dir.mkdir(parents=True, exist_ok=True)
        self._projects: dict[str, str] = (
            read_json_object(self._registry) if self._registry.exists() else {}
        )

    # ---- projects -----------------------------------------------------------------
    def list_projects(self) -> list[tuple[str, str]]:
        """`(id, name)` of every project, by id."""
        with self._lock:
            self.calls["list_projects"] += 1
            return sorted(self._projects.items())

    def create_project(self, name: str) -> str:
        """A new empty project; returns its server-generated id."""
        with self._lock:
            self.calls["create_project"] += 1
            project_id = uuid.uuid4().hex[:16]
            self._projects[project_id] = name
            write_json_atomic(self._registry, self._projects)
            return project_id

    def delete_project(self, project_id: str) -> None:
        """Close and delete a project's store; UnknownProject if absent."""
        with self._lock:
            self.calls["delete_project"] += 1
            self._check(project_id)
            engine = self._engines.pop(project_id, None)
            if engine is not None:
                engine.close()
            shutil.rmtree(self._folder(project_id), ignore_errors=True)
            del self._projects[project_id]
            write_json_atomic(self._registry, self._projects)

    # ---- writes ---------------------------------------------------------------------
    def capture(
        self, project_id: str, messages: Sequence[Message], date_time: str | None, session: int
    ) -> dict[str, int]:
        """Run one exchange through the engine (extraction and all); what it did."""
        with self._lock:
            self.calls["capture"] += 1
            engine = self._engine(project_id)
            turns = tuple(
                Turn(
                    m.speaker,
                    m.text,
                    m.id or f"T{engine.turn + 1}:{i + 1}",
                    session,
                    m.image_caption,
                )
                for i, m in enumerate(messages)
            )
            engine.extractor = self.extractor
            did = engine.process_exchange(Exchange(session, date_time or now_stamp(), turns))
            return {"turn": did["turn"], "facts": did["facts"], "errors": did["errors"]}

    def remember(
        self, project_id: str, text: str, marker: str | None, date_time: str | None
    ) -> str:
        """Store `text` verbatim as one memory; returns its memory id."""
        with self._lock:
            self.calls["remember"] += 1
            engine = self._engine(project_id)
            markers = (marker,) if marker else tuple(MARKER.findall(text))
            memory_id = f"m{engine.turn + 1}"
            turn = Turn("memory", text, memory_id, 1)
            engine.extractor = VerbatimExtractor(memory_id, markers or (memory_id,))
            try:
                engine.process_exchange(Exchange(1, date_time or now_stamp(), (turn,)))
            finally:
                engine.extractor = self.extractor
            return memory_id

    # ---- reads ----------------------------------------------------------------------
    def search(self, project_id: str, query: str, k: int) -> SearchResult:
        """The top `k` memories for `query`, best first, and their rendered context."""
        with self._lock:
            self.calls["search"] += 1
            return self._search(project_id, query, k)

    def _search(self, project_id: str, query: str, k: int) -> SearchResult:
        with self._lock:
            engine = self._engine(project_id)
            engine.flush()  # ingestion is over once a client searches (as in the arm)
            recalled = engine.recall(query)[: max(0, k)]
            hits = tuple(
                Hit(str(r.fact.id), r.fact.fact_content, float(r.score), tuple(r.fact.source_ids))
                for r in recalled
            )
            return SearchResult(hits, engine.render(recalled, query))

    def answer(self, project_id: str, query: str, k: int) -> tuple[str, str, SearchResult]:
        """The service's own answer: `(answer, model, what it answered from)`.

        The reference service has no LLM: it answers with the harness's offline
        extractive reader (`bench.providers.offline_answer`) over its own retrieval
        (the rendered context of the top `k` memories), so its answers are offline
        answers and are labelled with that reader's model id.
        """
        from bench.providers.offline_answer import MODEL_ID
        from bench.providers.offline_answer import answer as offline_answer

        with self._lock:
            self.calls["answer"] += 1
            found = self._search(project_id, query, k)
            return offline_answer(query, found.context), MODEL_ID, found

    def close(self) -> None:
        """Flush and close every open engine."""
        with self._lock:
            while self._engines:
                self._engines.popitem()[1].close()

    # ---- helpers --------------------------------------------------------------------
    def _check(self, project_id: str) -> None:
        if project_id not in self._projects:
            raise UnknownProject(f"project {project_id!r} not found")

    def _folder(self, project_id: str) -> Path:
        if not PROJECT_ID.match(project_id):
            raise UnknownProject(f"project {project_id!r} not found")
        projects = self.data_dir / "projects"
        return contained(projects / safe_name(project_id), projects)  # checked before rmtree

    def _engine(self, project_id: str) -> MemoryEngine:
        self._check(project_id)
        if project_id in self._engines:
            self._engines.move_to_end(project_id)
            return self._engines[project_id]
        engine = MemoryEngine(
            self._folder(project_id),
            self.embedder,
            self.config,
            extractor=self.extractor,
            conversation_id=project_id,
        )
        self._engines[project_id] = engine
        while len(self._engines) > MAX_OPEN:
            self._engines.popitem(last=False)[1].close()
        return engine
