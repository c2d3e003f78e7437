"""WordLlama embeddings loaded from the installed wheel, with downloads impossible."""

from __future__ import annotations

import numpy as np

from bench.wordllama_files import WORDLLAMA_CONFIG, tokenizer_file, weights_file


class WordLlamaEmbedder:
    """Deterministic offline embedder: mean-pooled WordLlama token vectors, L2-normalised."""

    def __init__(self, dim: int = 256, batch_size: int = 256) -> None:
        from safetensors import safe_open
        from tokenizers import Tokenizer
        from wordllama.inference import WordLlamaInference

        with safe_open(str(weights_file(dim)), framework="np", device="cpu") as f:
            weights = f.get_tensor("embedding.weight")
        tokenizer = Tokenizer.from_file(str(tokenizer_file()))
        self._model = WordLlamaInference(weights, tokenizer)
        self.model = f"wordllama/{WORDLLAMA_CONFIG}_{dim}"
        self.dim = dim
        self._batch_size = batch_size

    def embed(self, texts: list[str]) -> np.ndarray:
        """Return (len(texts), dim) float32 rows with unit L2 norm (zero rows stay zero)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vecs = np.asarray(
            self._model.embed(texts, norm=False, batch_size=self._batch_size), dtype=np.float32
        )
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        unit: np.ndarray = np.divide(vecs, norms, out=np.zeros_like(vecs), where=norms > 0)
        return unit
