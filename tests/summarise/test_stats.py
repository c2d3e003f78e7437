"""bench.summarise.stats cross-checked against scipy and statsmodels on random and edge data."""

from __future__ import annotations

import random
from statistics import NormalDist

import numpy as np
import pytest
from scipy.stats import binomtest
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.inter_rater import cohens_kappa
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from bench.summarise.stats import (
    Z_95,
    cohen_kappa,
    mcnemar_exact_p,
    mean,
    min_detectable_effect,
    min_significant_gap,
    percentile,
    wilson_interval,
)
from bench.summarise.stats import holm as holm_adjust


def random_paired(rng: random.Random) -> tuple[int, int, int, int]:
    """(both, a_only, b_only, neither) of a random paired sample, edge cases included."""
    shape = rng.choice(["random", "zero_discordant", "all_discordant", "one_sided", "large"])
    n = rng.randint(1, 300) if shape != "large" else rng.randint(1500, 2000)
    if shape == "zero_discordant":
        both = rng.randint(0, n)
        return both, 0, 0, n - both
    if shape == "all_discordant":
        a_only = rng.randint(0, n)
        return 0, a_only, n - a_only, 0
    if shape == "one_sided":
        return 0, n, 0, 0
    cuts = sorted(rng.randint(0, n) for _ in range(3))
    return cuts[0], cuts[1] - cuts[0], cuts[2] - cuts[1], n - cuts[2]


@pytest.mark.parametrize("seed", range(6))
def test_mcnemar_matches_statsmodels_and_scipy(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(60):
        both, a_only, b_only, neither = random_paired(rng)
        ours = mcnemar_exact_p(a_only, b_only)
        table = [[both, a_only], [b_only, neither]]
        assert ours == pytest.approx(mcnemar(table, exact=True).pvalue, rel=1e-9, abs=1e-250)
        if a_only + b_only:
            scipy_p = binomtest(a_only, a_only + b_only, 0.5).pvalue
            assert ours == pytest.approx(scipy_p, rel=1e-9, abs=1e-250)
        else:
            assert ours == 1.0


def test_mcnemar_edge_cases() -> None:
    assert mcnemar_exact_p(0, 0) == 1.0
    assert mcnemar_exact_p(5, 5) == 1.0
    assert mcnemar_exact_p(0, 6) == pytest.approx(2 / 64)
    assert 0.0 < mcnemar_exact_p(1, 1000) < 1e-290  # exact integers, no early underflow
    assert mcnemar_exact_p(210, 159) == pytest.approx(binomtest(159, 369).pvalue, rel=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_wilson_matches_statsmodels(seed: int) -> None:
    rng = random.Random(seed)
    cases = [(0, 1), (1, 1), (0, 1986), (1986, 1986), (1, 2)]
    cases += [
        (k, n) for n in (rng.randint(1, 2000) for _ in range(80)) for k in [rng.randint(0, n)]
    ]
    for k, n in cases:
        lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
        assert wilson_interval(k, n) == pytest.approx((lo, hi), rel=1e-10, abs=1e-12)
    assert wilson_interval(0, 0) is None
    assert abs(Z_95 - 1.959963984540054) < 1e-12
    assert NormalDist().inv_cdf(1 - 0.05 / 2) == Z_95  # the literal is the exact quantile


def test_holm_matches_statsmodels() -> None:
    rng = random.Random(7)
    for size in (1, 2, 5, 40):
        pvals = [rng.random() ** 3 for _ in range(size)] + [1.0, 0.0]
        expected = multipletests(pvals, method="holm")[1]
        assert holm_adjust(pvals) == pytest.approx(list(expected), rel=1e-12, abs=1e-15)
    assert holm_adjust([]) == []


def test_min_significant_gap_is_the_exact_threshold() -> None:
    for d in [*range(1, 80), 369, 1540]:
        # walk k down from the balanced split to the first significant one (scipy's p)
        k = d // 2
        while k >= 0 and binomtest(k, d, 0.5).pvalue >= 0.05:
            k -= 1
        assert min_significant_gap(d) == (d - 2 * k if k >= 0 else None)
    assert min_significant_gap(5) is None and min_significant_gap(6) == 6
    assert min_significant_gap(0) is None
    assert min_detectable_effect(6, 300) == pytest.approx(6 / 300)
    assert min_detectable_effect(4, 300) is None
    assert min_detectable_effect(10, 0) is None


@pytest.mark.parametrize("seed", range(3))
def test_cohen_kappa_matches_statsmodels(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(30):
        n = rng.randint(2, 300)
        agree = rng.random()
        a = [rng.random() < 0.6 for _ in range(n)]
        b = [x if rng.random() < agree else not x for x in a]
        table = np.zeros((2, 2))
        for x, y in zip(a, b, strict=True):
            table[int(x), int(y)] += 1
        if (table.sum(0) == n).any() and (table.sum(1) == n).any():
            continue  # both raters constant: kappa undefined
        kappa, count = cohen_kappa(zip(a, b, strict=True))
        assert count == n
        assert kappa == pytest.approx(cohens_kappa(table).kappa, rel=1e-9, abs=1e-12)


def test_cohen_kappa_undefined_cases() -> None:
    assert cohen_kappa([]) == (None, 0)
    assert cohen_kappa([(True, True)] * 5) == (None, 5)
    assert cohen_kappa([(True, False), (False, True)]) == (-1.0, 2)


def test_percentile_matches_numpy_linear() -> None:
    rng = random.Random(3)
    for size in (1, 2, 7, 100, 1986):
        values = [rng.uniform(0, 5000) for _ in range(size)]
        for q in (0, 50, 75, 90, 99, 100):
            assert percentile(values, q) == pytest.approx(np.percentile(values, q), rel=1e-12)
    assert percentile([], 50) is None
    assert mean([]) is None and mean([1.0, 2.0]) == 1.5
