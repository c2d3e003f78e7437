"""Exponential decay of record weights (methodology §4 step 5).

    w(t) = w_r · exp(−λ_eff · Δt),   λ_eff = λ_tier · exp(−η·k),   Δt = t − last_reinforced_turn

`w_r` is the weight set at the last reinforcement (1 on insert and on LTP), so decay
needs no per-turn write: the weight at any turn is a closed form of stored values,
identical to multiplying by exp(−λ_eff) once per exchange. An invalid record's weight
is frozen at its `invalid_at` turn. CoreAnchor's λ is 0: it never decays.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from arms.neuromorphic.config import NeuromorphicConfig
from arms.neuromorphic.records import Tier


def tier_lambdas(config: NeuromorphicConfig) -> np.ndarray:
    """λ per tier, indexed by `Tier` (all zero when decay is switched off)."""
    lambdas = np.zeros(len(Tier), dtype=np.float64)
    if config.decay:
        lambdas[Tier.ACTIVE] = config.lambda_active
        lambdas[Tier.EPHEMERAL] = config.lambda_ephemeral
    return lambdas


def effective_lambda(lam: np.ndarray | float, k: np.ndarray | int, eta: float) -> np.ndarray:
    """λ_eff = λ_tier · exp(−η·k): each reinforcement slows decay."""
    return np.asarray(lam, dtype=np.float64) * np.exp(-eta * np.asarray(k, dtype=np.float64))


def weights(
    w_r: np.ndarray,
    tier: np.ndarray,
    k: np.ndarray,
    last_reinforced: np.ndarray,
    invalid_at: np.ndarray,
    t: int,
    lambdas: np.ndarray,
    eta: float,
) -> np.ndarray:
    """Current weights of many records at turn `t` (frozen at `invalid_at` when invalid).

    Δt is a whole number and λ_eff one of a few (tier, k) values, so exp(−λ_eff·Δt)
    is read from `decayed_table` (one exp per (tier, k, Δt) per table, not one per
    record per turn), gathered by (tier·size + k)·span + Δt, and multiplied by w_r:
    the same products, exps and product as computing them per record. Past
    `MAX_SPAN` turns of Δt they are computed per record (λ_eff from `negated_table`,
    gathered by tier·size + k). The end of each record's decay, min(invalid_at, t)
    when invalid and t when valid (invalid_at = −1), is one unsigned minimum: −1 read
    as uint64 is 2⁶⁴ − 1, above every turn.
    """
    end = np.minimum(np.asarray(invalid_at, dtype=np.int64).view(np.uint64), np.uint64(t))
    dt = end.view(np.int64) - last_reinforced
    np.maximum(dt, 0, out=dt)
    size = _pow2(int(k.max()) + 1 if len(k) else 1)
    span = _pow2(int(dt.max()) + 1 if len(dt) else 1)
    lams = tuple(lambdas.tolist())
    code = tier * size
    code += k
    if span > MAX_SPAN:
        x = dt.astype(np.float64)
        x *= negated_table(lams, eta, size).take(code)
        return np.asarray(np.multiply(w_r, np.exp(x, out=x), out=x))
    table = decayed_table(lams, eta, size, span)
    code *= span
    code += dt
    return np.asarray(np.multiply(w_r, table.take(code)))


MAX_SPAN = 1_024
"""The longest Δt table: 3·size·1,024 doubles (1.5 MB at size 64), built once per doubling."""


def _pow2(n: int) -> int:
    """The table extent for values below `n`: a power of two, at least 64 (few rebuilds)."""
    return max(64, 1 << (n - 1).bit_length())


@lru_cache(maxsize=8)
def decayed_table(lambdas: tuple[float, ...], eta: float, size: int, span: int) -> np.ndarray:
    """exp(−λ_eff·Δt) of every (tier, k < `size`, Δt < `span`), flattened by that order.

    Entry ((tier·size + k)·span + Δt) is exp(float(Δt) · −λ_eff(tier, k)) from
    `negated_table`: −λ·Δt is bitwise −(λ·Δt), since rounding is symmetric in sign, and
    numpy's exp is elementwise, so each entry is bitwise the per-record computation
    w_r · exp(−λ_eff·Δt) needs.
    """
    neg = negated_table(lambdas, eta, size)
    table = np.exp(neg[:, None] * np.arange(span, dtype=np.float64)).ravel()
    table.setflags(write=False)
    return table


@lru_cache(maxsize=16)
def negated_table(lambdas: tuple[float, ...], eta: float, size: int) -> np.ndarray:
    """−λ_eff of every (tier, k) with k < `size`, flattened: entry tier·size + k.

    numpy's exp is elementwise, so each entry is bitwise `effective_lambda` per record.
    """
    ks = np.arange(size, dtype=np.float64)
    table = -effective_lambda(np.asarray(lambdas, dtype=np.float64)[:, None], ks, eta).ravel()
    table.setflags(write=False)
    return table


def prune_horizon(lam: float, w_prune: float, k: int = 0, eta: float = 0.15) -> float:
    """Turns until a never-reinforced record's weight reaches `w_prune`: ln(1/w_prune)/λ_eff."""
    return math.log(1.0 / w_prune) / float(effective_lambda(lam, k, eta))
