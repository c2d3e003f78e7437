"""Growth exponents: how a cost scales with conversation length, fitted on a log-log scale.

For points (n_i, y_i) with n_i, y_i > 0, the exponent b is the least-squares slope of
log y = a + b · log n (so y ≈ e^a · n^b); r² is that line's coefficient of determination.
b ≈ 1 is linear growth, b > 1 super-linear, b ≈ 0 a cost that stays bounded as the
conversation grows. Points with n or y ≤ 0 cannot be placed on the log scale and are
left out (counted in `n`); fewer than two usable points, or a single length, give no fit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

FLAT = 0.25
"""Below this exponent a cost is reported as `flat` (bounded as the conversation grows)."""
LINEAR = (0.85, 1.15)
"""Exponents in this closed band are `linear`; above it `super-linear`, below `sub-linear`."""


def growth_exponent(lengths: Sequence[float], costs: Sequence[float]) -> dict[str, Any] | None:
    """The log-log least-squares slope of `costs` against `lengths`, with r² and a verdict."""
    pairs = [(n, y) for n, y in zip(lengths, costs, strict=True) if n > 0 and y > 0]
    if len({n for n, _ in pairs}) < 2:
        return None
    x = np.log([n for n, _ in pairs])
    y = np.log([c for _, c in pairs])
    slope, intercept = np.polyfit(x, y, 1)
    residual = float(np.sum((y - (slope * x + intercept)) ** 2))
    total = float(np.sum((y - y.mean()) ** 2))
    r2 = 1.0 - residual / total if total > 0 else 1.0
    return {
        "exponent": round(float(slope), 3),
        "r2": round(r2, 3),
        "points": len(pairs),
        "growth": verdict(float(slope)),
    }


def verdict(exponent: float) -> str:
    """`flat`, `sub-linear`, `linear` or `super-linear` for a fitted exponent."""
    if math.isnan(exponent):
        return "unknown"
    if exponent < FLAT:
        return "flat"
    if exponent < LINEAR[0]:
        return "sub-linear"
    return "linear" if exponent <= LINEAR[1] else "super-linear"
