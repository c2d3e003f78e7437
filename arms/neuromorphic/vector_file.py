"""The archive's fact vectors on disk: an append-only float32 file, scanned in blocks.

Every archived fact keeps its vector for dense cold search, so held in memory they
grow with the conversation (256 float32 = 1 KiB a fact, ~0.25 GB at 10M tokens, and
twice that while a doubling array is copied). Here full blocks of `BLOCK` rows go to
an unlinked temporary file beside the store (`tempfile.TemporaryFile`: removed when
closed or when the process ends) and only the last, partial block stays in memory.

A scan maps `CHUNK` blocks of the file at a time and unmaps each chunk once scored
(its pages stay in the kernel's page cache, no longer in this process's resident set),
so its working set is one chunk whatever the archive holds. The blocks are the ones
`vectors.cosine_scores` multiplies (rows [i·BLOCK, (i+1)·BLOCK), the last one partial),
with the same shapes on the same bytes, so the scores are bitwise those of the
in-memory matrix. CPU time still grows with the archive: each scan reads every vector.
"""

from __future__ import annotations

import mmap
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from arms.neuromorphic.vectors import BLOCK

CHUNK = 16
"""Blocks mapped at once (16 MiB at dim 256): bounds a scan's resident pages."""


class VectorFile:
    """Rows of float32 vectors by position: full blocks on disk, the tail in memory."""

    def __init__(self, dim: int, folder: Path | None = None) -> None:
        """`folder`: where the unlinked file lives (None: the system's temporary folder)."""
        self.dim = dim
        self.n = 0
        self._row_bytes = 4 * dim
        self._tail = np.zeros((BLOCK, dim), dtype=np.float32)
        # held as long as the index, closed by `close` or when collected
        self._file = tempfile.TemporaryFile(dir=folder, prefix="armbench-vectors-")  # noqa: SIM115

    @property
    def on_disk(self) -> int:
        """Rows in whole blocks written to the file."""
        return self.n - self.n % BLOCK

    def append(self, vector: np.ndarray) -> None:
        """Add one row; a filled tail block is written to the file."""
        self._tail[self.n % BLOCK] = vector
        self.n += 1
        if self.n % BLOCK == 0:
            os.pwrite(self._file.fileno(), self._tail.tobytes(), (self.n - BLOCK) * self._row_bytes)

    def scores(self, qvec: np.ndarray) -> np.ndarray:
        """`cosine_scores(all rows, n, qvec)`, bit for bit, one chunk resident at a time."""
        out = np.empty(self.n, dtype=np.float32)
        disk = self.on_disk
        chunk_rows = CHUNK * BLOCK
        for start in range(0, disk, chunk_rows):
            rows = min(chunk_rows, disk - start)
            with self._map(start, rows) as view:
                block = np.frombuffer(view, dtype=np.float32).reshape(rows, self.dim)
                for i in range(0, rows, BLOCK):
                    out[start + i : start + i + BLOCK] = block[i : i + BLOCK] @ qvec
                del block
        if self.n > disk:
            out[disk:] = self._tail[: self.n - disk] @ qvec
        return out

    def rows(self, positions: Sequence[int] | np.ndarray) -> np.ndarray:
        """The vectors at `positions`, in order, as one (len, dim) array (a copy).

        Rows on disk are copied out of a map of their chunk (one map per chunk they fall
        in), so reading the thousands of rows of a hot-table rewrite costs a few maps, not
        a system call per row.
        """
        pos = np.asarray(positions, dtype=np.int64).reshape(-1)
        out = np.empty((len(pos), self.dim), dtype=np.float32)
        disk = self.on_disk
        if len(pos) and (pos.min() < 0 or pos.max() >= self.n):
            raise IndexError(f"vector file: position out of range 0..{self.n - 1}")
        in_tail = pos >= disk
        out[in_tail] = self._tail[pos[in_tail] - disk]
        chunk_rows = CHUNK * BLOCK
        chunk_of = pos // chunk_rows
        for chunk in np.unique(chunk_of[~in_tail]).tolist():
            take = np.flatnonzero((chunk_of == chunk) & ~in_tail)
            start = chunk * chunk_rows
            rows = min(chunk_rows, disk - start)
            with self._map(start, rows) as view:
                block = np.frombuffer(view, dtype=np.float32).reshape(rows, self.dim)
                out[take] = block[pos[take] - start]
                del block
        return out

    def _map(self, start: int, rows: int) -> _Window:
        return _Window(self._file.fileno(), start * self._row_bytes, rows * self._row_bytes)

    def close(self) -> None:
        """Remove the file."""
        self._file.close()

    def __del__(self) -> None:
        self._file.close()


class _Window:
    """A read-only map of a byte range (page-aligned start), unmapped on exit."""

    def __init__(self, fd: int, offset: int, length: int) -> None:
        self._map = mmap.mmap(fd, length, access=mmap.ACCESS_READ, offset=offset)

    def __enter__(self) -> memoryview:
        self._view = memoryview(self._map)
        return self._view

    def __exit__(self, *exc: object) -> None:
        self._view.release()
        self._map.close()
