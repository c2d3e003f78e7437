"""Ranked-retrieval metrics at a cutoff K, one pure function each (trec_eval definitions).

`ranked` is a deduplicated list of unit ids, best first; `relevance` maps relevant ids
to their grade (> 0). All functions read only `ranked[:k]`.

- recall@K    = |rel ∩ top K| / |rel|
- precision@K = |rel ∩ top K| / K            (K, not the list length: trec_eval `P_K`)
- MRR@K       = 1 / rank of the first relevant id in the top K, else 0
- nDCG@K      = DCG@K / IDCG@K with DCG = Σ_i (grade_i) / log2(i + 1), i the 1-based
                rank; IDCG sorts the grades descending (trec_eval `ndcg_cut`, linear gain)
- hit@K       = 1 if any relevant id is in the top K, else 0
- forbidden hit@K = 1 if any forbidden id is in the top K, else 0 (its mean over
                queries is the forbidden-hit rate)

A query with no relevant id (an abstention) has no recall/precision/MRR/nDCG: the
functions return None and the means skip it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from bench.summarise.stats import percentile


def recall_at(ranked: Sequence[str], relevance: Mapping[str, int], k: int) -> float | None:
    """|relevant ∩ top k| / |relevant|; None without relevant ids."""
    if not relevance:
        return None
    return sum(1 for d in ranked[:k] if d in relevance) / len(relevance)


def precision_at(ranked: Sequence[str], relevance: Mapping[str, int], k: int) -> float | None:
    """|relevant ∩ top k| / k; None without relevant ids."""
    if not relevance:
        return None
    return sum(1 for d in ranked[:k] if d in relevance) / k


def mrr_at(ranked: Sequence[str], relevance: Mapping[str, int], k: int) -> float | None:
    """1 / (1-based rank of the first relevant id within the top k), else 0."""
    if not relevance:
        return None
    for rank, doc in enumerate(ranked[:k], start=1):
        if doc in relevance:
            return 1.0 / rank
    return 0.0


def ndcg_at(ranked: Sequence[str], relevance: Mapping[str, int], k: int) -> float | None:
    """DCG@k / IDCG@k with linear gains grade / log2(rank + 1)."""
    if not relevance:
        return None
    dcg = sum(relevance.get(d, 0) / math.log2(r + 1) for r, d in enumerate(ranked[:k], 1))
    ideal = sorted(relevance.values(), reverse=True)[:k]
    idcg = sum(g / math.log2(r + 1) for r, g in enumerate(ideal, 1))
    return dcg / idcg if idcg > 0 else 0.0


def hit_at(ranked: Sequence[str], relevance: Mapping[str, int], k: int) -> float | None:
    """1.0 if any relevant id is in the top k, else 0.0; None without relevant ids."""
    if not relevance:
        return None
    return 1.0 if any(d in relevance for d in ranked[:k]) else 0.0


def forbidden_hit_at(ranked: Sequence[str], forbidden: Iterable[str], k: int) -> float | None:
    """1.0 if any forbidden (stale) id is in the top k, else 0.0; None without any."""
    stale = set(forbidden)
    if not stale:
        return None
    return 1.0 if any(d in stale for d in ranked[:k]) else 0.0


def mean(values: Iterable[float | None]) -> float | None:
    """Arithmetic mean of the present values; None when none is present."""
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def latency_summary(ms: Sequence[float]) -> dict[str, float | None]:
    """Retrieval latency in milliseconds: mean, p95 (linear interpolation) and max."""
    return {
        "avg": mean(ms),
        "p95": percentile(ms, 95.0),
        "max": max(ms) if ms else None,
    }


def dedupe(ids: Iterable[str]) -> list[str]:
    """Ids in first-seen order without repeats (rank order of the units they map to)."""
    return list(dict.fromkeys(ids))
