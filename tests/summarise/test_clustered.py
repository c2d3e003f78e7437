"""bench.summarise.clustered against brute force, numpy and the per-question exact test."""

from __future__ import annotations

import random
from fractions import Fraction
from itertools import product

import numpy as np
import pytest

from bench.summarise.clustered import (
    ClusterTally,
    bootstrap_interval,
    clustered_paired,
    clustered_test,
    design_effect,
    min_p,
    sign_flip_p,
)
from bench.summarise.stats import mcnemar_exact_p


def brute_force_p(diffs: list[int]) -> float:
    """P(|S| >= |s_obs|) over all 2^K sign vectors, zeros included, as an exact fraction."""
    observed = abs(sum(diffs))
    hits = sum(
        abs(sum(s * d for s, d in zip(signs, diffs, strict=True))) >= observed
        for signs in product((1, -1), repeat=len(diffs))
    )
    return float(Fraction(hits, 2 ** len(diffs)))


def random_tallies(rng: random.Random, k: int) -> list[ClusterTally]:
    tallies = []
    for _ in range(k):
        n = rng.randint(1, 40)
        tallies.append(ClusterTally(n, rng.randint(0, n), rng.randint(0, n)))
    return tallies


def test_sign_flip_p_equals_brute_force_enumeration() -> None:
    rng = random.Random(7)
    for _ in range(300):
        k = rng.randint(1, 12)
        spread = rng.choice([1, 2, 5, 30])
        diffs = [rng.randint(-spread, spread) for _ in range(k)]
        assert sign_flip_p(diffs) == brute_force_p(diffs), diffs


def test_sign_flip_p_edges() -> None:
    assert sign_flip_p([]) == 1.0
    assert sign_flip_p([0, 0, 0]) == 1.0
    assert sign_flip_p([3, -3]) == 1.0
    assert sign_flip_p([5] * 10) == min_p(10) == 2 / 1024  # the floor with K = 10
    assert sign_flip_p([5] * 10 + [0] * 5) == 2 / 1024  # clusters with D_c = 0 add nothing
    assert min_p(0) == 1.0 and min_p(1) == 1.0


def test_sign_flip_p_is_exact_for_a_hundred_clusters() -> None:
    """BEAM size: 100 clusters, no sampling; equal to the fraction counted another way."""
    rng = random.Random(3)
    diffs = [rng.randint(-6, 9) for _ in range(100)]
    # dynamic programme over sums with a dict, one cluster at a time (independent of the
    # binomial grouping the module uses)
    dist: dict[int, int] = {0: 1}
    for d in diffs:
        step: dict[int, int] = {}
        for s, c in dist.items():
            for t in (s + d, s - d):
                step[t] = step.get(t, 0) + c
        dist = step
    hits = sum(c for s, c in dist.items() if abs(s) >= abs(sum(diffs)))
    assert sign_flip_p(diffs) == float(Fraction(hits, 2**100))
    assert 0 < sign_flip_p(diffs) < 1


def test_clusters_of_one_reduce_exactly_to_mcnemar() -> None:
    """One question per cluster (LongMemEval): p is the exact McNemar p, float for float."""
    rng = random.Random(11)
    for _ in range(400):
        a_only, b_only = rng.randint(0, 120), rng.randint(0, 120)
        both, neither = rng.randint(0, 50), rng.randint(0, 50)
        cells = [(True, False)] * a_only + [(False, True)] * b_only
        cells += [(True, True)] * both + [(False, False)] * neither
        pairs = [(f"q{i}", a, b) for i, (a, b) in enumerate(cells)]
        test = clustered_paired(pairs, replicates=50)
        assert test.p == mcnemar_exact_p(a_only, b_only), (a_only, b_only)
        assert test.k == len(cells) and test.k_discordant == a_only + b_only
        if test.deff is not None:
            assert test.deff == pytest.approx(1.0, rel=1e-9)
            assert test.n_eff == pytest.approx(len(cells), rel=1e-9)


def numpy_design_effect(tallies: list[ClusterTally]) -> float:
    """deff from question-level arrays with numpy (cluster-robust over iid variance)."""
    x, g = [], []
    for c, t in enumerate(tallies):
        a = np.array([1] * t.a + [0] * (t.n - t.a))
        b = np.array([1] * t.b + [0] * (t.n - t.b))
        x.extend((b - a).tolist())  # any pairing inside the cluster has the same D_c
        g.extend([c] * t.n)
    xs, gs = np.array(x, dtype=float), np.array(g)
    n, k = len(xs), len(tallies)
    d = xs.mean()
    v_iid = xs.var(ddof=1) / n
    resid = np.array([(xs[gs == c] - d).sum() for c in range(k)])
    v_cluster = k / (k - 1) * (resid**2).sum() / n**2
    return float(v_cluster / v_iid)


def test_design_effect_against_numpy() -> None:
    rng = random.Random(5)
    for _ in range(50):
        tallies = random_tallies(rng, rng.randint(2, 15))
        # question-level discordance as numpy_design_effect builds it
        discordant = sum(sum(1 for i in range(t.n) if (i < t.a) != (i < t.b)) for t in tallies)
        ours = design_effect(tallies, discordant)
        if ours is None:
            continue
        assert ours == pytest.approx(numpy_design_effect(tallies), rel=1e-9)


def test_bootstrap_against_numpy_on_the_same_draws() -> None:
    """Same resamples (random.Random(seed).choices), statistic and percentiles in numpy."""
    rng = random.Random(2)
    tallies = random_tallies(rng, 10)
    ours = bootstrap_interval(tallies, seed=123, replicates=500)
    draws = random.Random(123)
    diffs = np.array([t.b - t.a for t in tallies], dtype=float)
    sizes = np.array([t.n for t in tallies], dtype=float)
    idx = np.array([draws.choices(range(10), k=10) for _ in range(500)])
    values = diffs[idx].sum(axis=1) / sizes[idx].sum(axis=1)
    lo, hi = np.percentile(values, [2.5, 97.5])
    assert ours == pytest.approx((lo, hi), abs=1e-12)


def test_bootstrap_against_an_independent_numpy_generator() -> None:
    """Another generator (numpy's PCG64), many replicates: the intervals agree closely."""
    rng = random.Random(9)
    tallies = random_tallies(rng, 12)
    ours = bootstrap_interval(tallies, seed=1, replicates=20000)
    gen = np.random.default_rng(1)
    diffs = np.array([t.b - t.a for t in tallies], dtype=float)
    sizes = np.array([t.n for t in tallies], dtype=float)
    idx = gen.integers(0, 12, size=(20000, 12))
    lo, hi = np.percentile(diffs[idx].sum(axis=1) / sizes[idx].sum(axis=1), [2.5, 97.5])
    assert ours is not None
    assert ours[0] == pytest.approx(lo, abs=0.01) and ours[1] == pytest.approx(hi, abs=0.01)
    assert ours[0] < sum(diffs) / sum(sizes) < ours[1]


def test_seeds_make_the_bootstrap_repeat_and_differ() -> None:
    tallies = random_tallies(random.Random(4), 10)
    first = clustered_test(tallies, 30, seed=8, replicates=400)
    again = clustered_test(tallies, 30, seed=8, replicates=400)
    other = clustered_test(tallies, 30, seed=9, replicates=400)
    assert first == again and (first.seed, first.replicates) == (8, 400)
    assert first.ci95 != other.ci95
    assert clustered_test(tallies, 30, replicates=None).ci95 is None


def test_clustered_paired_tallies_by_cluster() -> None:
    pairs = [("c1", True, False), ("c1", True, True), ("c2", False, True), ("c2", False, True)]
    test = clustered_paired(pairs, replicates=100)
    assert (test.k, test.n, test.k_discordant) == (2, 4, 2)
    assert test.diff == pytest.approx((3 - 2) / 4)  # B right 3, A right 2
    assert test.p == brute_force_p([-1, 2])
