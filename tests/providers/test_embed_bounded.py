"""The offline embedder's memory is bounded by tokens (`bench.providers.offline_embed`).

- its vectors are WordLlama's own, bit for bit, whatever the token budget (padding and
  windowing change no bit), so stores and records are unchanged;
- one very long text is pooled over token windows: the peak allocation stays near the
  budget instead of growing with the text (WordLlama's padded batch held the whole text's
  token rows, twice: a 53,000-character BEAM message cost gigabytes in a batch of 256).
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from bench.providers.offline_embed import WordLlamaEmbedder

TEXTS = [
    "Caroline went to the LGBTQ support group yesterday.",
    "",
    "short",
    " ".join(f"word{i}" for i in range(3000)),  # longer than the small budget below
    "Melanie: I painted a sunrise over the lake last week! [shares a photo: a lake]",
    "\n".join(f"Turn {i}: we talked about the garden and the dog." for i in range(60)),
    "x",
]


def _wordllama_reference(texts: list[str]) -> np.ndarray:
    """WordLlama's own padded-batch embedding, L2-normalised as the embedder does."""
    from safetensors import safe_open
    from tokenizers import Tokenizer
    from wordllama.inference import WordLlamaInference

    from bench.wordllama_files import tokenizer_file, weights_file

    with safe_open(str(weights_file(256)), framework="np", device="cpu") as f:
        weights = f.get_tensor("embedding.weight")
    model = WordLlamaInference(weights, Tokenizer.from_file(str(tokenizer_file())))
    vecs = np.asarray(model.embed(texts, norm=False, batch_size=256), dtype=np.float32)
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    unit: np.ndarray = np.divide(vecs, norms, out=np.zeros_like(vecs), where=norms > 0)
    return unit


@pytest.mark.parametrize("budget", [64, 1000, 16_384])
def test_vectors_are_wordllamas_bit_for_bit_at_any_budget(budget: int) -> None:
    reference = _wordllama_reference(TEXTS)
    bounded = WordLlamaEmbedder(token_budget=budget, batch_size=3).embed(TEXTS)
    assert bounded.dtype == np.float32 and bounded.shape == (len(TEXTS), 256)
    assert np.array_equal(bounded.view(np.uint32), reference.view(np.uint32))


def test_tokeniser_calls_are_bounded_by_characters_and_change_no_bit() -> None:
    """Each tokenizer call takes at most `tokenize_chars` characters (a longer text alone)
    and `batch_size` texts; the vectors are the same bits as with one call for all."""
    embedder = WordLlamaEmbedder(batch_size=4, tokenize_chars=120)
    groups = list(embedder._groups(TEXTS))
    assert [first for first, _ in groups] == [0, 3, 4, 5, 6]
    assert [text for _, group in groups for text in group] == TEXTS
    assert all(len(g) == 1 or sum(map(len, g)) <= 120 for _, g in groups)
    assert len(list(WordLlamaEmbedder(batch_size=2)._groups(TEXTS))) == 4  # texts bound
    whole = WordLlamaEmbedder(tokenize_chars=10**9).embed(TEXTS)
    assert np.array_equal(embedder.embed(TEXTS).view(np.uint32), whole.view(np.uint32))


def test_no_texts_give_an_empty_matrix() -> None:
    assert WordLlamaEmbedder().embed([]).shape == (0, 256)


def test_a_long_text_is_embedded_within_the_token_budget() -> None:
    embedder = WordLlamaEmbedder()  # default budget: 16,384 tokens a step
    long_text = " ".join(f"w{i % 5000}" for i in range(60_000))  # ~ 180,000 tokens
    tracemalloc.start()
    try:
        vector = embedder.embed([long_text])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert np.isclose(np.linalg.norm(vector[0]), 1.0)
    # The whole text's token rows would be 180k x 256 x 4 B = 184 MB (x2 with the mask).
    assert peak < 80 * 2**20, f"peak {peak / 2**20:.0f} MiB"
