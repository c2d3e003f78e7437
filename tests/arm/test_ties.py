"""Exact score ties are broken by stable keys (issue 8, item 5)."""

from __future__ import annotations

import numpy as np
import pytest

from bench.arm.fusion import rrf_fuse
from bench.arm.topk import top_k


def test_top_k_takes_tied_items_by_key_whatever_the_layout() -> None:
    rng = np.random.default_rng(0)
    scores = np.array([0.9, 0.5, 0.5, 0.5, 0.5, 0.1, 0.5, 0.7])
    ids = np.arange(100, 108)
    expected = [100, 107, 101, 102]  # 0.9, 0.7, then the two lowest ids among the 0.5s
    for _ in range(50):
        perm = rng.permutation(len(scores))
        got = top_k(scores[perm], 4, keys=ids[perm])
        assert list(ids[perm][got]) == expected


@pytest.mark.parametrize("k", [0, 1, 3, 8, 20])
def test_top_k_matches_a_full_stable_sort(k: int) -> None:
    rng = np.random.default_rng(k)
    scores = rng.integers(0, 4, size=40).astype(float)  # many ties
    scores[5] = -np.inf
    full = np.lexsort((np.arange(40), -scores))[:k]
    assert list(top_k(scores, k)) == list(full)
    assert list(top_k(scores, k, keys=np.arange(40))) == list(full)  # the keyed path


def test_top_k_equals_its_two_pass_form_with_nan_and_infinities() -> None:
    """The one-pass candidate split selects what separate > and == passes selected."""

    def two_pass(scores: np.ndarray, k: int, keys: np.ndarray | None) -> np.ndarray:
        n = len(scores)
        kth = np.partition(scores, n - k)[n - k]
        above, tied = np.flatnonzero(scores > kth), np.flatnonzero(scores == kth)
        if keys is not None:
            tied = tied[np.argsort(keys[tied], kind="stable")]
        chosen = np.concatenate([above, tied[: k - len(above)]])
        order = np.lexsort((chosen if keys is None else keys[chosen], -scores[chosen]))
        return chosen[order]

    rng = np.random.default_rng(4)
    for trial in range(300):
        n = int(rng.integers(1, 60))
        scores = rng.integers(0, 5, size=n).astype(np.float32)
        for value in (np.nan, -np.inf, np.inf)[: trial % 4]:
            scores[rng.integers(n, size=3)] = value
        keys = rng.permutation(n) if trial % 2 else None
        for k in (1, n // 2 + 1, n):
            got = top_k(scores, k, keys=keys)
            assert got.tolist() == two_pass(scores, k, keys).tolist()


def test_rrf_formula_and_tie_keys() -> None:
    fused = rrf_fuse([[1, 2, 3], [2, 1]], k=60)
    assert fused[0][1] == pytest.approx(1 / 61 + 1 / 62)
    assert [d for d, _ in fused] == [1, 2, 3]  # 1 and 2 tie exactly: first seen wins
    assert [d for d, _ in rrf_fuse([[2, 1], [1, 2]], k=60)] == [2, 1]
    assert [d for d, _ in rrf_fuse([[2, 1], [1, 2]], k=60, tie_key=lambda d: d)] == [1, 2]


def test_rrf_first_seen_ties_match_an_explicit_first_seen_key() -> None:
    """The stable sort of first-seen items equals sorting by (−score, first-seen index)."""
    rng = np.random.default_rng(3)
    for _ in range(200):
        lists = [
            [int(d) for d in rng.choice(30, size=rng.integers(0, 20), replace=False)]
            for _ in range(int(rng.integers(1, 4)))
        ]
        fused = rrf_fuse(lists, k=int(rng.integers(1, 61)))
        first_seen = list(dict.fromkeys(d for ranked in lists for d in ranked))
        want = sorted(fused, key=lambda kv: (-kv[1], first_seen.index(kv[0])))
        assert fused == want


def test_both_arms_fuse_through_the_one_function() -> None:
    from arms.neuromorphic.fusion import rrf
    from arms.rag import rrf_fuse as rag_fuse

    assert rrf([[5, 4], [4, 5]], 60) == rrf_fuse([[5, 4], [4, 5]], 60)
    assert rag_fuse([[(5, 0.9), (4, 0.8)], [(4, 2.0), (5, 1.0)]], 60) == rrf_fuse(
        [[5, 4], [4, 5]], 60, tie_key=int
    )
