"""Index of one scope's cold archive: live facts, supersessions, exchange log.

Built by folding the archive's event log (see `state.py`), so it always agrees with the
SQLite file. It serves the archive's dense search, the link cleanup's "does this
entity exist anywhere" check, history, and the source turns used for hydration.

What grows with the archive stays out of memory where a file holds it (issue 39): the
facts' vectors are in a `VectorFile` (full blocks on disk, scanned a chunk at a time),
and a fact's text and fields are read back from the archive by id when a search
returns it (`ArchivedFacts`); in memory per fact are its position, entity key and the
terms it adds to the document frequencies.
"""

from __future__ import annotations

from collections import OrderedDict, defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from math import isfinite
from pathlib import Path
from typing import Protocol

import numpy as np

from arms.neuromorphic.archive import query_terms
from arms.neuromorphic.records import FactRow, entity_key
from arms.neuromorphic.vector_file import VectorFile
from bench.arm.topk import top_k
from bench.text import format_date, session_date


@dataclass(frozen=True)
class SourceTurn:
    """A turn of the exchange log: when it was said and how it reads."""

    dia_id: str
    """Dataset turn id."""
    turn: int
    """Exchange (engine clock tick) the turn was ingested at."""
    date: str
    """Calendar day of its session (see `day_of`)."""
    text: str
    """The rendered turn text."""


@lru_cache(maxsize=4096)
def day_of(date_time: str) -> str:
    """A session stamp as a calendar day (`8 May 2023`); the stamp itself if unparsable."""
    day = session_date(date_time)
    return format_date(day) if day else date_time.strip()


class FactSource(Protocol):
    """Where archived facts are read back by id (the cold archive)."""

    @property
    def folder(self) -> Path:
        """The folder of its file (the vector file goes beside it)."""
        ...

    def fact_rows(self, ids: Sequence[int]) -> dict[int, FactRow]:
        """The facts of `ids` found in this scope, by id."""
        ...


CACHED = 4096
"""Facts read back from the archive kept for reuse (a search returns tens)."""


class ArchivedFacts(Mapping[int, FactRow]):
    """Fact id → archived fact, read from `source` on demand (all in memory without one).

    Facts added since the last `settle` are held (they may not be written yet); after
    it, only the `CACHED` most recently read ones are.
    """

    def __init__(self, order: list[int], source: FactSource | None) -> None:
        self._order = order
        self._source = source
        self._recent: dict[int, FactRow] = {}
        self._cache: OrderedDict[int, FactRow] = OrderedDict()

    def add(self, fact: FactRow) -> None:
        """Hold a fact just archived until `settle`."""
        self._recent[fact.id] = fact

    def settle(self) -> None:
        """The facts added so far are in the source: stop holding them."""
        if self._source is not None:
            self._recent.clear()

    def prefetch(self, ids: Sequence[int]) -> None:
        """Read the facts of `ids` not held, in one query."""
        missing = [f for f in ids if f not in self._recent and f not in self._cache]
        if missing and self._source is not None:
            for fid, fact in self._source.fact_rows(missing).items():
                self._keep(fid, fact)

    def _keep(self, fid: int, fact: FactRow) -> None:
        self._cache[fid] = fact
        if len(self._cache) > CACHED:
            self._cache.popitem(last=False)

    def __getitem__(self, fid: int) -> FactRow:
        fact = self._recent.get(fid) or self._cache.get(fid)
        if fact is None:
            self.prefetch([fid])
            fact = self._cache[fid]  # KeyError: not archived in this scope
        return fact

    def __iter__(self) -> Iterator[int]:
        return iter(self._order)

    def __len__(self) -> int:
        return len(self._order)


class ArchiveIndex:
    """Live archived facts of one scope, their vectors, and the exchange log."""

    def __init__(self, dim: int, source: FactSource | None = None) -> None:
        """`source`: where facts are read back (None: kept in memory, vectors in a temp file)."""
        self.dim = dim
        self.order: list[int] = []
        self.facts = ArchivedFacts(self.order, source)
        self._vectors = VectorFile(dim, None if source is None else source.folder)
        self._ids = np.zeros(64, dtype=np.int64)
        """`order` as an array: the tie-break keys of dense search, never rebuilt per query."""
        self._superseded_pos = np.zeros(64, dtype=np.int64)
        """Positions of the superseded facts, in supersession order (first `_superseded`)."""
        self._superseded = 0
        self.pos: dict[int, int] = {}
        self.superseded: dict[int, int] = {}
        """Fact id → turn at which a newer fact replaced it."""
        self.by_entity: dict[str, list[int]] = defaultdict(list)
        self.df: dict[str, int] = defaultdict(int)
        """Term → number of archived facts containing it (picks rare query terms)."""
        self.turn_date: dict[int, str] = {}
        self.turns: dict[str, SourceTurn] = {}

    def add_exchange(self, turn: int, date_time: str, turns: list[list[str]]) -> None:
        """Log one exchange's date and turns (`[dia_id, rendered text]` pairs)."""
        day = day_of(date_time)
        self.turn_date[turn] = day
        for dia_id, text in turns:
            self.turns[dia_id] = SourceTurn(dia_id, turn, day, text)

    def add_fact(self, fact: FactRow) -> None:
        """Append a fact (never rewritten)."""
        i = len(self.order)
        if i == len(self._ids):
            self._ids = np.concatenate([self._ids, np.zeros_like(self._ids)])
        self._vectors.append(fact.embedding)
        self._ids[i] = fact.id
        self.facts.add(fact)
        self.order.append(fact.id)
        self.pos[fact.id] = i
        self.by_entity[entity_key(fact.entity_name)].append(fact.id)
        for term in query_terms(f"{fact.entity_name} {fact.fact_content}"):  # distinct terms
            self.df[term] += 1

    def rare_terms(self, terms: list[str], k: int) -> list[str]:
        """The `k` query terms found in the fewest archived facts (terms found in none dropped)."""
        scored = [(self.df.get(t, 0), i, t) for i, t in enumerate(terms)]
        return [t for df, _, t in sorted(scored) if df > 0][:k]

    def supersede(self, ids: list[int], turn: int) -> None:
        """Mark facts as replaced at `turn`: kept for history, excluded from search."""
        for fid in ids:
            if fid in self.pos and fid not in self.superseded:
                self.superseded[fid] = turn
                if self._superseded == len(self._superseded_pos):
                    grown = np.zeros_like(self._superseded_pos)
                    self._superseded_pos = np.concatenate([self._superseded_pos, grown])
                self._superseded_pos[self._superseded] = self.pos[fid]
                self._superseded += 1

    def is_live(self, fid: int) -> bool:
        """True when the fact exists and has not been superseded."""
        return fid in self.pos and fid not in self.superseded

    def live_ids_of(self, key: str) -> list[int]:
        """Live fact ids with entity key `key`."""
        return [f for f in self.by_entity.get(key, ()) if f not in self.superseded]

    def known(self, key: str) -> bool:
        """True when any archived fact (live or superseded) has entity key `key`."""
        return bool(self.by_entity.get(key))

    def scores(self, qvec: np.ndarray) -> np.ndarray:
        """Cosine of every archived fact (superseded ones too), by position.

        `vectors.cosine_scores` over the facts' vectors in archive order, bit for bit.
        """
        return self._vectors.scores(qvec)

    def dense_search(
        self, qvec: np.ndarray, k: int, scores: np.ndarray | None = None
    ) -> list[tuple[int, float]]:
        """Top-k live facts by cosine (vectors are unit length), best first, ties by id.

        `scores`: this query's `scores(qvec)`, when the caller has them already (not
        changed). Superseded facts score −inf: set by position on a copy, the same array
        as a select over a mask of every fact, without a pass over the whole archive.
        """
        n = len(self.order)
        if n == 0 or k <= 0:
            return []
        scores = self.scores(qvec) if scores is None else scores.copy()
        scores[self._superseded_pos[: self._superseded]] = -np.inf
        k = min(k, n)
        top = top_k(scores, k, keys=self._ids[:n])  # exact ties by fact id
        order = self.order
        best = scores[top].tolist()  # Python floats, as float() of each score gives
        return [(order[i], s) for i, s in zip(top.tolist(), best, strict=True) if isfinite(s)]

    def vectors_at(self, positions: Sequence[int] | np.ndarray) -> np.ndarray:
        """The vectors of the facts at archive `positions`, in order (a copy)."""
        return self._vectors.rows(positions)

    def cosines(self, fids: list[int], qvec: np.ndarray) -> list[float]:
        """Cosine between each fact's vector and a unit query vector, as Python floats.

        One `np.vecdot` call: its float32 loop takes each row's dot product with the
        same BLAS dot as `vector @ qvec` does for a single row (bitwise the same, unlike a
        matrix-vector product, whose kernel groups rows), without a call per fact.
        """
        rows = self.vectors_at([self.pos[fid] for fid in fids])
        scores: list[float] = np.vecdot(rows, qvec).tolist()
        return scores

    def history(self, key: str) -> list[FactRow]:
        """Every archived fact of an entity, oldest first (superseded ones included)."""
        return self.rows(self.by_entity.get(key, []))

    def rows(self, fids: list[int]) -> list[FactRow]:
        """The archived facts of `fids`, in order (read back in one query where needed)."""
        self.facts.prefetch(fids)
        return [self.facts[f] for f in fids]

    def __len__(self) -> int:
        return len(self.order)
