"""Decay, pruning, reinforcement and elevation, checked against the formulas of §4.

w(t) = exp(−λ_tier · exp(−η·k) · Δt); pruned when w < w_prune = 0.1.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from arms.neuromorphic import decay
from arms.neuromorphic.config import NeuromorphicConfig
from arms.neuromorphic.engine import MemoryEngine
from arms.neuromorphic.records import Tier, entity_key
from tests.arms.test_engine_support import ScriptedExtractor, draft, engine, tick

THREE_TIERS = {
    1: [
        draft("Ann core", "Ann is a teacher", Tier.CORE),
        draft("Ann active", "Ann plans a trip", Tier.ACTIVE),
        draft("Ann mood", "Ann feels tired", Tier.EPHEMERAL),
    ]
}


def run(mem: MemoryEngine, until: int) -> None:
    """Process filler exchanges until the clock reads `until`."""
    while mem.turn < until:
        mem.process_exchange(tick(mem.turn + 1))


def row_of(mem: MemoryEngine, entity: str) -> int | None:
    """The alive hot row of an entity (valid or not), or None."""
    rows = sorted(mem.state.ws.by_entity.get(entity_key(entity), ()))
    return rows[-1] if rows else None


def weight(mem: MemoryEngine, entity: str) -> float:
    row = row_of(mem, entity)
    assert row is not None, entity
    return float(mem.weights()[row])


@pytest.mark.parametrize("n", [1, 5, 20])
def test_weight_after_n_turns_per_tier(tmp_path: Path, n: int) -> None:
    cfg = NeuromorphicConfig(retrieve_during_ingest=False, prune=False)
    mem = engine(tmp_path, ScriptedExtractor(THREE_TIERS), cfg)
    run(mem, 1 + n)  # inserted at turn 1, so Δt = n
    assert weight(mem, "Ann core") == 1.0
    assert weight(mem, "Ann active") == pytest.approx(math.exp(-0.05 * n), rel=1e-12)
    assert weight(mem, "Ann mood") == pytest.approx(math.exp(-0.69 * n), rel=1e-12)
    mem.close()


def test_tuned_rate_decays_ten_times_slower(tmp_path: Path) -> None:
    cfg = NeuromorphicConfig(retrieve_during_ingest=False, lambda_active=0.005)
    mem = engine(tmp_path, ScriptedExtractor(THREE_TIERS), cfg)
    run(mem, 41)
    assert weight(mem, "Ann active") == pytest.approx(math.exp(-0.005 * 40), rel=1e-12)
    mem.close()


def test_closed_form_equals_per_turn_multiplication() -> None:
    lambdas = np.array([0.0, 0.05, 0.69])
    one = np.ones(3)
    args = (np.array([0, 1, 2]), np.array([0, 3, 0]), np.zeros(3, int), np.full(3, -1))
    closed = decay.weights(one, *args, t=7, lambdas=lambdas, eta=0.15)
    stepped = one.copy()
    for _ in range(7):
        stepped = stepped * np.exp(-decay.effective_lambda(lambdas[args[0]], args[1], 0.15))
    assert np.allclose(closed, stepped, rtol=1e-12)


def test_prune_horizons_46_and_461_turns() -> None:
    assert round(decay.prune_horizon(0.05, 0.1)) == 46
    assert round(decay.prune_horizon(0.005, 0.1)) == 461


@pytest.mark.parametrize(("lam", "last_valid", "pruned_at"), [(0.05, 46, 47), (0.005, 460, 461)])
def test_active_record_is_archived_exactly_at_the_horizon(
    tmp_path: Path, lam: float, last_valid: int, pruned_at: int
) -> None:
    cfg = NeuromorphicConfig(retrieve_during_ingest=False, lambda_active=lam, flush_every=1000)
    mem = engine(tmp_path, ScriptedExtractor({1: [draft("Ann plan", "Ann plans a trip")]}), cfg)
    run(mem, 1 + last_valid)
    assert mem.state.ws.valid_rows_of("ann plan")  # w = exp(−λ·Δt) still ≥ 0.1
    run(mem, 1 + pruned_at)
    row = row_of(mem, "Ann plan")
    assert row is not None and mem.state.ws.reason[row] == "pruned"  # archived, not deleted
    run(mem, 2 + pruned_at)
    assert row_of(mem, "Ann plan") is None  # an already-invalid low record is deleted
    assert [f.fact_content for f in mem.history("Ann plan")] == ["Ann plans a trip"]
    mem.close()


def test_ephemeral_is_deleted_and_core_never_pruned(tmp_path: Path) -> None:
    mem = engine(tmp_path, ScriptedExtractor(THREE_TIERS))
    horizon = decay.prune_horizon(0.69, 0.1)  # 3.34 turns
    run(mem, 1 + math.floor(horizon))
    assert row_of(mem, "Ann mood") is not None
    run(mem, 1 + math.ceil(horizon))
    assert row_of(mem, "Ann mood") is None and mem.counters["pruned_deleted"] == 1
    run(mem, 200)
    assert weight(mem, "Ann core") == 1.0 and mem.state.ws.valid_rows_of("ann core")
    mem.close()


def test_reinforcement_resets_weight_and_slows_decay(tmp_path: Path) -> None:
    mem = engine(tmp_path, ScriptedExtractor({1: [draft("Ann plan", "Ann plans a trip to Rome")]}))
    run(mem, 10)
    for _ in range(4):
        mem.recall("trip to Rome", reinforce=True)
    row = row_of(mem, "Ann plan")
    assert row is not None
    assert mem.state.ws.k[row] == 4 and mem.state.ws.reinforced[row] == 10
    assert weight(mem, "Ann plan") == 1.0
    run(mem, 30)
    slowed = 0.05 * math.exp(-0.15 * 4)
    assert weight(mem, "Ann plan") == pytest.approx(math.exp(-slowed * 20), rel=1e-12)
    assert decay.prune_horizon(0.05, 0.1, k=4) == pytest.approx(46.05 * math.exp(0.6), rel=1e-3)
    mem.close()


def test_elevation_to_core_anchor_at_k_10(tmp_path: Path) -> None:
    mem = engine(tmp_path, ScriptedExtractor({1: [draft("Ann plan", "Ann plans a trip to Rome")]}))
    run(mem, 1)
    for _ in range(9):
        mem.recall("trip to Rome", reinforce=True)
    run(mem, 5)  # consolidation at turn 5: k = 9 is not enough
    plan = row_of(mem, "Ann plan")
    assert plan is not None
    assert mem.state.ws.tier[plan] == Tier.ACTIVE and mem.state.ws.k[plan] == 9
    mem.recall("trip to Rome", reinforce=True)  # k = 10
    run(mem, 9)
    assert mem.state.ws.tier[plan] == Tier.ACTIVE  # only consolidation elevates
    run(mem, 10)
    assert mem.state.ws.tier[plan] == Tier.CORE and mem.counters["elevated"] == 1
    run(mem, 300)
    assert weight(mem, "Ann plan") == 1.0  # CoreAnchor never decays
    mem.close()


def test_consolidation_drops_links_to_entities_that_exist_nowhere(tmp_path: Path) -> None:
    script = {
        1: [
            draft(
                "Ann trip",
                "Ann visited Rome",
                related_entities=("Ann camera", "Ann ghost", "Ann mood"),
            ),
            draft("Ann mood", "Ann feels sleepy", Tier.EPHEMERAL),
        ],
        2: [draft("Ann camera", "Ann owns a camera")],
    }
    mem = engine(tmp_path, ScriptedExtractor(script))
    run(mem, 5)  # consolidation at turn 5 checks the records created in turns 1–5
    assert row_of(mem, "Ann mood") is None  # pruned from the hot set, still archived
    row = row_of(mem, "Ann trip")
    assert row is not None and mem.state.ws.related[row] == ("Ann camera", "Ann mood")
    assert mem.counters["links_dropped"] == 1
    mem.close()


@pytest.mark.parametrize("t", [0, 1, 63, 64, 120, 1_023, 1_024, 1_500])  # tables, then per record
def test_weights_from_the_decay_table_equal_the_formula_bit_for_bit(t: int) -> None:
    rng = np.random.default_rng(2)
    lambdas = np.array([0.0, 0.05, 0.69])
    for n in (0, 1, 5, 1_000):  # k up to 199: tables of 64 and 256 entries
        tier, k = rng.integers(3, size=n), rng.integers(0, 200, size=n)
        w_r, last = rng.random(n), rng.integers(0, t + 1, size=n)
        invalid = np.where(rng.random(n) < 0.1, rng.integers(0, t + 2, size=n), -1)
        end = np.where(invalid >= 0, np.minimum(invalid, t), t)
        dt = np.maximum(end - last, 0).astype(np.float64)
        want = w_r * np.exp(-decay.effective_lambda(lambdas[tier], k, 0.15) * dt)
        got = decay.weights(w_r, tier, k, last, invalid, t, lambdas, 0.15)
        assert got.tobytes() == want.tobytes()
