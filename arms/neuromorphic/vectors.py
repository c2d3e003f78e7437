"""Cosine scores of many unit vectors against one query, in row blocks.

A single large matrix-vector product makes OpenBLAS spread the work over threads,
which on a small, busy machine is ten times slower than doing it on one; blocks of
1,024 rows stay under its threading threshold and give bitwise-identical scores.

OpenBLAS computes a call's rows in groups of 4 with one kernel and the last n % 4 rows
with another, so a row's score can differ in the last bit with its place in the call;
within a group it depends on the row alone. `gather_scores` uses that to read the hot
set's scores from the archive's (every hot record is archived) instead of a second pass
over the same vectors, recomputing exactly the few rows whose kernel differs.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

BLOCK = 1024
GROUP = 4
"""Rows OpenBLAS's single-precision gemv kernel computes together."""


class Rows(Protocol):
    """A matrix read by slices of rows: a numpy array, or vectors kept elsewhere."""

    def __getitem__(self, rows: slice, /) -> np.ndarray:
        """The rows `rows` as a C-contiguous (len, dim) float32 array."""
        ...


def cosine_scores(matrix: Rows, n: int, qvec: np.ndarray) -> np.ndarray:
    """`matrix[:n] @ qvec` as float32, computed in blocks of BLOCK rows."""
    if n <= BLOCK:
        return np.asarray(matrix[:n] @ qvec)
    parts = [matrix[i : min(i + BLOCK, n)] @ qvec for i in range(0, n, BLOCK)]
    return np.concatenate(parts)


def gather_scores(
    full: np.ndarray, pos: np.ndarray, matrix: Rows, n: int, qvec: np.ndarray
) -> np.ndarray:
    """`cosine_scores(matrix, n, qvec)` bit for bit, read from `full` where possible.

    `full` = `cosine_scores(other, len(full), qvec)` and `other[pos[r]]` = `matrix[r]`
    (`pos` ≥ 0). A score is read when both rows lie in whole groups of GROUP
    (same kernel); a row in the tail of `full` is recomputed in its group of `matrix`,
    and the tail of `matrix` by the call that `cosine_scores` makes for it (its last
    block from one whole group before the tail: the same kernels on the same rows).
    """
    scores: np.ndarray = full.take(pos)  # a gather: `full[pos]`, in half the time
    tail = n % GROUP
    body = n - tail
    for row in np.flatnonzero(pos[:body] >= len(full) - len(full) % GROUP).tolist():
        start = row - row % GROUP
        scores[row] = (matrix[start : start + GROUP] @ qvec)[row - start]
    if tail:
        start = max((n - 1) // BLOCK * BLOCK, body - GROUP)
        scores[body:] = (matrix[start:n] @ qvec)[body - start :]
    return scores
