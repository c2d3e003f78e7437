"""Top-k selection whose exact ties are broken by a stable key, not by the partition.

`np.argpartition` picks *some* of the items tied at the k-th score; which ones depends
on the array's layout, so a store reopened from disk (rows in another order) could
retrieve differently from the engine that built it. Here every item strictly above the
k-th score is kept, and the tied ones are taken in ascending key order.
"""

from __future__ import annotations

import numpy as np


def top_k(scores: np.ndarray, k: int, keys: np.ndarray | None = None) -> np.ndarray:
    """Indices of the k best scores, best first; exact ties by ascending `keys` (or index).

    O(n) selection plus a sort of the k kept items; -inf scores may be selected when
    fewer than k finite ones exist (callers mask them as before). Without `keys` the key
    is the index itself, which `flatnonzero` already lists in ascending order, so no
    index array is built and the tied items need no sort.
    """
    n = len(scores)
    k = min(k, n)
    if k <= 0:
        return np.empty(0, dtype=np.int64)
    kth = np.partition(scores, n - k)[n - k]  # the k-th largest value
    # one pass finds the candidates (≥ kth; few), then they split in two: the same
    # ascending index lists as `flatnonzero(scores > kth)` and `(scores == kth)` (a NaN
    # passes none of the three tests)
    candidates = np.flatnonzero(scores >= kth)
    value = scores[candidates]
    above = candidates[value > kth]
    tied = candidates[value == kth]
    if keys is not None:
        keys = np.asarray(keys)
        tied = tied[np.argsort(keys[tied], kind="stable")]
    chosen = np.concatenate([above, tied[: k - len(above)]])
    return chosen[np.lexsort((chosen if keys is None else keys[chosen], -scores[chosen]))]
