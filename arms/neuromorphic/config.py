"""Typed options of the neuromorphic engine: every parameter and one switch per mechanism.

Defaults are methodology §4. `conf/arm/neuromorphic.yaml` and `conf/arm/tuned.yaml`
list exactly these fields and differ only in `lambda_active` (0.05 vs 0.005).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class NeuromorphicConfig:
    """Parameters and ablation switches of the neuromorphic memory engine."""

    kind: str = "neuromorphic"
    """Registered arm kind; always `neuromorphic`."""
    # decay, pruning, consolidation
    lambda_active: float = 0.05
    """Decay rate of ActiveContext records per exchange (tuned: 0.005); CoreAnchor is 0."""
    lambda_ephemeral: float = 0.69
    """Decay rate of EphemeralState records per exchange."""
    eta: float = 0.15
    """Consolidation slows decay: lambda_eff = lambda_tier * exp(-eta * k)."""
    w_prune: float = 0.1
    """Records whose weight falls below this are pruned."""
    consolidate_every: int = 5
    """Exchanges between consolidation passes."""
    elevate_k: int = 10
    """ActiveContext records reinforced this many times become CoreAnchor."""
    # retrieval
    top_k: int = 10
    """Hot vector hits (valid records, cosine)."""
    cold_top_k: int = 20
    """Cold archive hits (keyword FTS5 plus optional dense), in total."""
    max_hops: int = 2
    """Spreading activation depth over `related_entities`."""
    spread_cap: int = 10
    """Most records spreading activation may add (best activation first)."""
    spread_factor: float = 0.5
    """Activation passed along one link (times the neighbour's weight)."""
    rrf_k: int = 60
    """Reciprocal Rank Fusion constant: score = sum 1 / (rrf_k + rank)."""
    rerank_top_k: int = 20
    """Facts kept after fusion (one per entity)."""
    hydrate_top_k: int = 10
    """Top facts whose source turns are put back beside them."""
    hydrate_full_k: int = 3
    """Of those, the best few get whole turns; the rest their best-matching sentence."""
    extractor_context_k: int = 10
    """Retrieved facts shown to the LLM extractor so it can name overrides."""
    retrieve_during_ingest: bool = True
    """Step 2: retrieve (and, with `ltp`, reinforce) against every exchange at ingest."""
    reinforce_on_query: bool = False
    """Question-time retrieval reinforces what it returns (mutates the store)."""
    # one switch per mechanism (ablations)
    decay: bool = True
    """Off: every λ_tier is 0, so w·exp(−λ_eff·Δt) never falls (§4.5)."""
    prune: bool = True
    """Off: records below `w_prune` are kept (§4.6)."""
    ltp: bool = True
    """Off: retrieval never reinforces what it returns (k never grows) (§4.8)."""
    override: bool = True
    """Off: new facts never supersede older ones (§4.4)."""
    consolidation: bool = True
    """Off: no consolidation passes and no elevation to CoreAnchor (§4.7)."""
    spreading: bool = True
    """Off: no spreading activation over `related_entities` (§4.9)."""
    cold_search: bool = True
    """Off: the cold archive is never searched (§4.9)."""
    cold_dense: bool = True
    """Off: cold search is keyword (FTS5) only, without the dense part (§4.9)."""
    rrf: bool = True
    """Off: hot, graph and cold lists are concatenated in that order instead of fused."""
    hydration: bool = True
    """Off: facts are rendered without their source turns (§4.10)."""
    answer_type_gate: bool = True
    """Off: no `<ANSWER_TYPE>` rule is added for the question (§4.11)."""
    # storage
    flush_every: int = 20
    """Exchanges between archive flushes (SQLite commit, checkpoint; see `hot_sync_every`)."""
    hot_sync_every: int = 5
    """Archive flushes between appends of the changed hot records to LanceDB (and on close).

    The archive is the durable log; the LanceDB copy only makes reopening fast, so a
    crash between hot writes costs a replay, never data."""
    compact_every: int = 20
    """LanceDB versions allowed to accumulate before compaction and cleanup."""
    agent_id: str = "armbench"
    """Scope of every read and write, together with the conversation id."""
