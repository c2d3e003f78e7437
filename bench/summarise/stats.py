"""Paired statistics for the summary, standard library only (exact integer arithmetic).

Every function is pure; tests cross-check them against scipy and statsmodels.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

ALPHA = 0.05
Z_95 = 1.9599639845400536
"""The two-sided 95% normal quantile `statistics.NormalDist().inv_cdf(1 − ALPHA / 2)`, as
a literal so the summariser does not import `statistics` (and `random`, `fractions`)
at start-up; `tests/summarise/test_stats.py` checks the two are the same float."""


def wilson_interval(successes: int, n: int, z: float = Z_95) -> tuple[float, float] | None:
    """Wilson score interval for `successes / n`; None when n = 0.

        centre = (p + z²/2n) / (1 + z²/n),  half = z·√(p(1−p)/n + z²/4n²) / (1 + z²/n)

    Equals statsmodels `proportion_confint(successes, n, method="wilson")`, clipped to
    [0, 1] against rounding (k = 0 gives a lower bound of 0, not 3e-17).
    """
    if n <= 0:
        return None
    p = successes / n
    z2 = z * z
    denom = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def _lower_tail_count(k: int, n: int) -> int:
    """Σ_{i=0..k} C(n, i), exactly."""
    total, term = 0, 1
    for i in range(k + 1):
        total += term
        term = term * (n - i) // (i + 1)
    return total


def mcnemar_exact_p(only_a: int, only_b: int) -> float:
    """Exact two-sided McNemar p: binomial test of the discordant pairs against 1/2.

        d = only_a + only_b,  p = min(1, 2 · Σ_{i ≤ min(only_a, only_b)} C(d, i) / 2^d)

    p = 1 when there are no discordant pairs. Smaller p = stronger evidence of a
    difference. Equals statsmodels `mcnemar(table, exact=True).pvalue` and, for d > 0,
    scipy `binomtest(only_a, d, 0.5).pvalue`.
    """
    d = only_a + only_b
    if d == 0:
        return 1.0
    k = min(only_a, only_b)
    if 2 * k >= d:
        return 1.0
    return min(1.0, float(2 * _lower_tail_count(k, d) / 2**d))


def min_significant_gap(discordant: int, alpha: float = ALPHA) -> int | None:
    """The smallest |only_a − only_b| that `mcnemar_exact_p` calls significant (p < alpha).

    Given d discordant pairs, splits are (k, d − k); the gap is d − 2k for the largest k
    with p < alpha. None when no split reaches it (d ≤ 5 at alpha = 0.05).
    """
    if discordant <= 0:
        return None
    best: int | None = None
    total, term, scale = 0, 1, 2**discordant
    # With b = total.bit_length(), p = 2·total / 2^d < 2^(b + 1 − d). While that bound is
    # at most alpha / 2 (rounding cannot carry p to alpha) the big-integer division is
    # skipped; the decisions are those of the plain loop.
    below = discordant - 2 + math.floor(math.log2(alpha)) if 0 < alpha < 1 else -1
    for k in range(discordant // 2 + 1):
        total += term
        if total.bit_length() > below and min(1.0, 2 * total / scale) >= alpha:
            break
        best = k
        term = term * (discordant - k) // (k + 1)
    return None if best is None else discordant - 2 * best


def min_detectable_effect(discordant: int, n: int, alpha: float = ALPHA) -> float | None:
    """Minimum detectable effect: `min_significant_gap(discordant) / n`, an accuracy difference.

    The smallest difference in accuracy between the two sides that the exact McNemar
    test would call significant with this many discordant pairs among n paired
    questions. None when n = 0 or no split of the discordant pairs can be significant.
    """
    gap = min_significant_gap(discordant, alpha)
    return None if gap is None or n <= 0 else gap / n


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values, in the input order.

        sorted p₍₁₎ ≤ … ≤ p₍ₘ₎:  adj₍ᵢ₎ = max_{j ≤ i} min(1, (m − j + 1) · p₍ⱼ₎)

    Equals statsmodels `multipletests(p, method="holm")[1]`.
    """
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[index]))
        adjusted[index] = running
    return adjusted


def cohen_kappa(pairs: Iterable[tuple[bool, bool]]) -> tuple[float | None, int]:
    """Cohen's κ of two binary raters and the number of items; κ None when undefined.

        κ = (p_o − p_e) / (1 − p_e),  p_e = p₁·q₁ + (1 − p₁)(1 − q₁)

    1 = perfect agreement, 0 = chance level. Undefined (None) when there are no items
    or p_e = 1 (both raters constant).
    """
    n = agree = yes_a = yes_b = 0
    for a, b in pairs:
        n += 1
        agree += a == b
        yes_a += a
        yes_b += b
    if n == 0:
        return None, 0
    p_o = agree / n
    p_e = (yes_a * yes_b + (n - yes_a) * (n - yes_b)) / (n * n)
    if p_e >= 1.0:
        return None, n
    return (p_o - p_e) / (1 - p_e), n


def fleiss_kappa(ratings: Sequence[Sequence[bool]]) -> tuple[float | None, int]:
    """Fleiss' κ of binary ratings, n raters (here: repeats) per item; κ None when undefined.

    For N items with n ≥ 2 ratings each, n_ij = raters putting item i in category j:

        P_i = (Σ_j n_ij² − n) / (n(n − 1)),   P̄ = (1/N) Σ_i P_i
        p_j = Σ_i n_ij / (N·n),               P̄_e = Σ_j p_j²
        κ = (P̄ − P̄_e) / (1 − P̄_e)

    1 = every item rated alike every time, 0 = chance level. Equals statsmodels
    `fleiss_kappa` on the items × categories count table. Undefined (None) without items
    or when P̄_e = 1 (one category throughout). Items must all carry the same n.
    """
    if not ratings:
        return None, 0
    n = len(ratings[0])
    if n < 2 or any(len(r) != n for r in ratings):
        raise ValueError("fleiss_kappa: every item needs the same number (>= 2) of ratings")
    items = len(ratings)
    yes = [sum(r) for r in ratings]
    p_bar = math.fsum((y * y + (n - y) ** 2 - n) / (n * (n - 1)) for y in yes) / items
    p_yes = sum(yes) / (items * n)
    p_e = p_yes**2 + (1 - p_yes) ** 2
    if p_e >= 1.0:
        return None, items
    return (p_bar - p_e) / (1 - p_e), items


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (0–100) by linear interpolation (numpy's default); None if empty."""
    if not values:
        return None
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def mean(values: Sequence[float]) -> float | None:
    """The arithmetic mean; None for no values."""
    return math.fsum(values) / len(values) if values else None


@dataclass(frozen=True)
class Rate:
    """`k` of `n`, with its Wilson 95% interval."""

    k: int
    """Count of successes."""
    n: int
    """Count of trials (0 gives no interval)."""

    @property
    def value(self) -> float | None:
        """K / n, or None when n = 0."""
        return self.k / self.n if self.n else None

    @property
    def ci(self) -> tuple[float, float] | None:
        """Wilson 95% interval, or None when n = 0."""
        return wilson_interval(self.k, self.n)
