"""WordLlama embeddings loaded from the installed wheel, with downloads impossible.

Memory is bounded by tokens, not by texts. WordLlama's own `embed` pads every batch of
`batch_size` texts to its longest text and gathers a (texts x longest x dim) float32
array, then a second one for the mask product: a 53,000-character BEAM message in a
batch of 256 chunks costs 256 x 14k x 256 x 4 B x 2 = 7 GB. Here texts are tokenised
`batch_size` at a time (fewer when long: below), packed into steps of at most
`TOKEN_BUDGET` padded tokens (count x longest), and a text longer than the budget is
mean-pooled over token windows of `TOKEN_BUDGET` tokens, its running sum carried from
window to window. A step holds about `2 x TOKEN_BUDGET x dim x 4` bytes (32 MiB at dim
256). A tokenizer call takes at most `TOKENIZE_CHARS` characters as well: its per-token
records live in native memory, and 256 long chunks in one call were the largest part of
rag's peak on long conversations.

The vectors are bit for bit WordLlama's: its pooling sums token rows one after another
in float32 (numpy reduces a non-contiguous axis row by row), padding rows add +-0.0, and
a window's sum continues from the previous one's, so neither the padding length nor the
windowing changes a bit (tests/providers/test_embed_bounded.py checks it against
`WordLlamaInference`).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from bench.wordllama_files import WORDLLAMA_CONFIG, tokenizer_file, weights_file

TOKEN_BUDGET = 16_384
"""Padded tokens gathered in one step (count x longest); also the window of a long text."""
TOKENIZE_CHARS = 262_144
"""Characters tokenised in one call at most (a longer text goes alone). The tokenizer
keeps ids, offsets and token strings per token in native memory, which stays resident
after the call: rag's 8,666 chunks of the synthetic 10M-token tier, 256 a call, added
192 MB to the peak; a quarter-million characters a call, 105 MB, in the same CPU time."""


class WordLlamaEmbedder:
    """Deterministic offline embedder: mean-pooled WordLlama token vectors, L2-normalised."""

    def __init__(
        self,
        dim: int = 256,
        batch_size: int = 256,
        token_budget: int = TOKEN_BUDGET,
        tokenize_chars: int = TOKENIZE_CHARS,
    ) -> None:
        from safetensors import safe_open
        from tokenizers import Tokenizer

        with safe_open(str(weights_file(dim)), framework="np", device="cpu") as f:
            weights = f.get_tensor("embedding.weight")
        self._weights = np.ascontiguousarray(weights.astype(np.float32))
        self._tokenizer = Tokenizer.from_file(str(tokenizer_file()))
        self._tokenizer.no_padding()
        self._tokenizer.no_truncation()
        self.model = f"wordllama/{WORDLLAMA_CONFIG}_{dim}"
        self.dim = dim
        self._batch_size = max(1, batch_size)
        self._budget = max(1, token_budget)
        self._chars = max(1, tokenize_chars)

    def embed(self, texts: list[str]) -> np.ndarray:
        """Return (len(texts), dim) float32 rows with unit L2 norm (zero rows stay zero)."""
        vecs = np.empty((len(texts), self.dim), dtype=np.float32)
        for start, group in self._groups(texts):
            encoded = self._tokenizer.encode_batch(group, add_special_tokens=False)
            ids = [self._clip(np.asarray(e.ids, dtype=np.int32)) for e in encoded]
            del encoded
            for first, step in self._steps(ids):
                at = start + first
                vecs[at : at + len(step)] = self._pool(step)
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        unit: np.ndarray = np.divide(vecs, norms, out=np.zeros_like(vecs), where=norms > 0)
        return unit

    def _clip(self, ids: np.ndarray) -> np.ndarray:
        """Out-of-vocabulary ids clamp to the table, as WordLlama does."""
        return np.clip(ids, 0, self._weights.shape[0] - 1, out=ids)

    def _groups(self, texts: list[str]) -> Iterator[tuple[int, list[str]]]:
        """Consecutive runs of at most `batch_size` texts and `TOKENIZE_CHARS` characters."""
        first, size = 0, 0
        for i, text in enumerate(texts):
            if i > first and (i - first == self._batch_size or size + len(text) > self._chars):
                yield first, texts[first:i]
                first, size = i, 0
            size += len(text)
        if first < len(texts):
            yield first, texts[first:]

    def _steps(self, ids: list[np.ndarray]) -> Iterator[tuple[int, list[np.ndarray]]]:
        """Consecutive runs of texts whose padded size (count x longest) fits the budget."""
        first, longest = 0, 0
        for i, row in enumerate(ids):
            wider = max(longest, len(row))
            if i > first and wider * (i - first + 1) > self._budget:
                yield first, ids[first:i]
                first, wider = i, len(row)
            longest = wider
        if first < len(ids):
            yield first, ids[first:]

    def _pool(self, step: list[np.ndarray]) -> np.ndarray:
        """Mean of each text's token rows: padded in one gather, or windowed when long."""
        longest = max(len(row) for row in step)
        if longest > self._budget:
            return np.stack([self._pool_long(row) for row in step])
        padded = np.zeros((len(step), longest), dtype=np.int32)
        mask = np.zeros((len(step), longest), dtype=np.float32)
        for i, row in enumerate(step):
            padded[i, : len(row)] = row
            mask[i, : len(row)] = 1.0
        count = np.maximum(mask.sum(axis=1, keepdims=True), 1.0).astype(np.float32)
        summed = np.sum(self._weights[padded] * mask[..., np.newaxis], axis=1, dtype=np.float32)
        pooled: np.ndarray = summed / count
        return pooled

    def _pool_long(self, row: np.ndarray) -> np.ndarray:
        """One long text: token rows summed window by window, in order, then averaged."""
        total = np.zeros((1, self.dim), dtype=np.float32)
        for at in range(0, len(row), self._budget):
            window = self._weights[row[at : at + self._budget]]
            total = np.sum(np.concatenate([total, window]), axis=0, keepdims=True)
        pooled: np.ndarray = total[0] / np.float32(max(len(row), 1))
        return pooled
