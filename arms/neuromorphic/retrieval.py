"""The full retrieval path (methodology §4 step 9): hot, cold and graph lists, fused.

1. hot: top_k valid records of the working set by cosine (read from the archive's
   cosine pass when dense search makes one: `vectors.gather_scores`);
2. cold: archive keyword search (FTS5's BM25 on the rarest query terms, ranked in
   memory once the index is built: keyword_index.py) interleaved with dense search,
   cold_top_k in total, superseded facts excluded;
3. graph: spreading activation from the hot hits (max_hops) and one hop from cold hits;
4. Reciprocal Rank Fusion of [hot, graph, cold], one record per entity (hot beats
   archive), the best rerank_top_k kept.
Nothing here mutates the state; reinforcement is the caller's decision.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from arms.neuromorphic.archive import query_terms
from arms.neuromorphic.config import NeuromorphicConfig
from arms.neuromorphic.fusion import concatenate, one_per_entity, rrf
from arms.neuromorphic.keyword_index import KeywordSearch
from arms.neuromorphic.records import Fact, Recalled, entity_key
from arms.neuromorphic.spreading import spread
from arms.neuromorphic.state import MemoryState
from arms.neuromorphic.vectors import cosine_scores, gather_scores
from arms.neuromorphic.workingset import WorkingSet
from bench.arm.topk import top_k

MAX_KEYWORD_TERMS = 8
"""The rarest query terms sent to FTS5 (an exchange yields dozens; common ones add noise)."""


def hot_search(
    ws: WorkingSet,
    qvec: np.ndarray,
    k: int,
    archived: np.ndarray | None = None,
    valid: np.ndarray | None = None,
) -> list[tuple[int, float]]:
    """Top-k valid rows by cosine as (row, score), best first, ties by row (= id) order.

    `archived`: the archive index's `scores(qvec)`; the hot scores are then read from
    them (`gather_scores`, bitwise the same) rather than computed in a second pass.
    `valid`: `ws.valid_mask()` when the caller has it already.
    """
    n = ws.n
    valid = ws.valid_mask() if valid is None else valid
    count = int(np.count_nonzero(valid))
    if k <= 0 or count == 0:
        return []
    pos = ws.archive_pos[:n]
    if archived is not None and (pos.min() >= 0 or not (pos[valid] < 0).any()):
        scores = gather_scores(archived, pos, ws.matrix(), n, qvec)
    else:
        scores = cosine_scores(ws.matrix(), n, qvec)
    scores[~valid] = -np.inf
    k = min(k, count)
    top = top_k(scores, k)  # exact ties by row (= id) order, whatever the layout
    return list(zip(top.tolist(), scores[top].tolist(), strict=True))  # Python ints, floats


def cold_search(
    keywords: KeywordSearch,
    state: MemoryState,
    query: str,
    qvec: np.ndarray,
    limit: int,
    archived: np.ndarray | None,
) -> list[int]:
    """Live archived fact ids: keyword and dense hits interleaved, deduplicated, capped.

    `archived`: the archive's cosine scores for dense search (None: keyword only).
    """
    index = state.index
    terms = index.rare_terms(query_terms(query), MAX_KEYWORD_TERMS)
    keyword = [f for f in keywords.search(terms, 3 * limit) if index.is_live(f)]
    vectors = [] if archived is None else [f for f, _ in index.dense_search(qvec, limit, archived)]
    return interleave(keyword, vectors, limit)


def interleave(first: list[int], second: list[int], limit: int) -> list[int]:
    """first[0], second[0], first[1], second[1], ...: each id once, at most `limit`.

    Stops at `limit` ids: an id met later could only be appended after them.
    """
    merged: list[int] = []
    seen: set[int] = set()
    for i in range(max(len(first), len(second))):
        for hits in (first, second):
            if i < len(hits) and hits[i] not in seen:
                if len(merged) == limit:
                    return merged
                seen.add(hits[i])
                merged.append(hits[i])
    return merged


@dataclass(frozen=True, slots=True)
class Hit:
    """One recalled record before its public view (`Fact`) is built."""

    id: int
    """Fact id."""
    score: float
    """Fused retrieval score."""
    found_by: tuple[str, ...]
    """The lists that found it (`hot`, `graph`, `cold`), in that order."""
    row: int | None
    """Its hot row when it is in the hot set, alive and valid; None: archived only."""


def recall(
    state: MemoryState,
    keywords: KeywordSearch,
    config: NeuromorphicConfig,
    query: str,
    qvec: np.ndarray,
    weights: np.ndarray,
) -> list[Recalled]:
    """Retrieve, fuse and rerank facts for `query` (no state change)."""
    hits = recall_hits(state, keywords, config, query, qvec, weights)
    return [recalled(state, hit, weights) for hit in hits]


def recalled(state: MemoryState, hit: Hit, weights: np.ndarray) -> Recalled:
    """The public view of a hit: its fact (`hit_fact`), fused score and lists."""
    return Recalled(hit_fact(state, hit, weights), hit.score, hit.found_by)


def hit_fact(state: MemoryState, hit: Hit, weights: np.ndarray) -> Fact:
    """A hit's fact: the hot record (weight from `weights`) or the archived fact."""
    if hit.row is None:
        return archived_fact(state, hit.id)
    return state.ws.fact(hit.row, weights[hit.row])


def recall_hits(
    state: MemoryState,
    keywords: KeywordSearch,
    config: NeuromorphicConfig,
    query: str,
    qvec: np.ndarray,
    weights: np.ndarray,
) -> list[Hit]:
    """`recall` without building the views: ingestion shows the extractor only a few."""
    ws, index = state.ws, state.index
    dense = config.cold_search and config.cold_dense
    archived = index.scores(qvec) if dense else None  # one pass serves hot and dense search
    valid = ws.valid_mask()  # one mask serves hot search and spreading
    hot = hot_search(ws, qvec, config.top_k, archived, valid)
    cold: list[int] = []
    if config.cold_search:
        cold = cold_search(keywords, state, query, qvec, config.cold_top_k, archived)
        index.facts.prefetch(cold)  # read back from the archive in one query
    graph: list[tuple[int, float]] = []
    if config.spreading:
        seeds = list(zip([index.facts[f] for f in cold], index.cosines(cold, qvec), strict=True))
        graph = spread(
            ws, weights, hot, seeds,
            max_hops=config.max_hops, cap=config.spread_cap, factor=config.spread_factor,
            valid=valid,
        )  # fmt: skip
    named = {
        "hot": [ws.ids[r] for r, _ in hot],
        "graph": [ws.ids[r] for r, _ in graph],
        "cold": cold,
    }
    lists = list(named.values())
    fused = rrf(lists, config.rrf_k) if config.rrf else concatenate(lists)

    hot_row = {fid: row for fid, _ in fused if (row := _hot_row(ws, fid)) is not None}

    def is_hot(fid: int) -> bool:
        return fid in hot_row

    def entity_of(fid: int) -> str:
        row = hot_row.get(fid)
        return entity_key(index.facts[fid].entity_name) if row is None else ws.keys[row]

    kept = one_per_entity(fused, entity_of, is_hot, config.rerank_top_k)
    found_by = _found_by(named)
    return [
        Hit(id=fid, score=score, found_by=found_by[fid], row=hot_row.get(fid))
        for fid, score in kept
    ]


def _found_by(named: dict[str, list[int]]) -> dict[int, tuple[str, ...]]:
    """Each listed id → the names of the lists holding it, in list order (each name once).

    One pass over the lists (tens of ids), rather than testing every kept id against
    every list.
    """
    out: dict[int, tuple[str, ...]] = {}
    for name, ids in named.items():
        for fid in dict.fromkeys(ids):
            out[fid] = (*out.get(fid, ()), name)
    return out


def _hot_row(ws: WorkingSet, fid: int) -> int | None:
    """The record's hot row if it is in the hot set, alive and valid; else None.

    `.item` reads Python scalars: no numpy scalar per fused id.
    """
    row = ws.row_of.get(fid)
    return row if row is not None and ws.alive.item(row) and ws.invalid_at.item(row) < 0 else None


def archived_fact(state: MemoryState, fid: int) -> Fact:
    """The public view of an archived fact that is not (or no longer) in the hot set."""
    f = state.index.facts[fid]
    superseded = state.index.superseded.get(fid)
    return Fact(
        id=f.id,
        entity_name=f.entity_name,
        fact_content=f.fact_content,
        memory_type=f.tier,
        weight=0.0,
        k=0,
        created_at_turn=f.turn,
        last_reinforced_turn=f.turn,
        related_entities=f.related,
        valid_at=f.turn,
        invalid_at=superseded,
        valid_date=f.valid_date,
        invalid_date=None if superseded is None else state.index.turn_date.get(superseded),
        source_ids=f.source_ids,
        invalid_reason=None if superseded is None else "superseded",
        in_hot=False,
    )
