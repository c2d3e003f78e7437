"""Each distinct text embedded once per process: an in-memory memo before an embedder.

The arms of a run embed many of the same texts: neuromorphic and tuned embed the same
exchanges and, with the same extractor, the same facts; LongMemEval haystacks share
sessions between questions. The offline embedder is deterministic and embeds a text the
same whatever batch it comes in (tests/providers/test_embed_memo.py checks it bit for bit), so a
text's vector is kept, keyed by a 16-byte BLAKE2b digest of the text, and only the texts
not yet seen go to the embedder, in one batch. The memo holds at most `max_entries`
vectors (least recently used dropped first: `max_entries x dim x 4` bytes, 32 MiB at
the defaults), so a run's peak memory does not grow with its number of questions.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict

import numpy as np

from bench.providers.base import Embedder

MAX_ENTRIES = 32_768
"""Vectors kept: 32 MiB of float32 at dim 256."""


class MemoEmbedder:
    """An `Embedder` that embeds each distinct text once (bounded, least recently used)."""

    def __init__(self, inner: Embedder, max_entries: int = MAX_ENTRIES) -> None:
        self.inner = inner
        self.model = inner.model
        self.dim = inner.dim
        self._max = max(1, max_entries)
        self._memo: OrderedDict[bytes, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        """Texts answered from the memo (a text repeated within one call counts too)."""

    def embed(self, texts: list[str]) -> np.ndarray:
        """`inner.embed(texts)`, each text not seen before embedded once, in one batch."""
        keys = [hashlib.blake2b(t.encode("utf-8"), digest_size=16).digest() for t in texts]
        found: dict[bytes, np.ndarray] = {}
        with self._lock:
            for key in keys:
                if key in self._memo:
                    self._memo.move_to_end(key)
                    found[key] = self._memo[key]
        todo = list(dict.fromkeys(k for k in keys if k not in found))
        if todo:
            first = {k: texts[i] for i, k in reversed(list(enumerate(keys)))}
            fresh = np.asarray(self.inner.embed([first[k] for k in todo]), dtype=np.float32)
            found.update(zip(todo, fresh, strict=True))
            self._keep(todo, fresh)
        with self._lock:
            self.hits += len(keys) - len(todo)
        if not keys:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([found[k] for k in keys])

    def _keep(self, keys: list[bytes], rows: np.ndarray) -> None:
        with self._lock:
            for key, row in zip(keys, rows, strict=True):
                self._memo[key] = row.copy()  # not a view that would pin the whole batch
                self._memo.move_to_end(key)
            while len(self._memo) > self._max:
                self._memo.popitem(last=False)
