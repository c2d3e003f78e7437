"""Each distinct text embedded once (`bench.providers.embed_memo`), vectors bit for bit.

- WordLlama embeds a text the same alone as in any batch (what makes the memo exact);
- the memo's vectors equal the embedder's own, in the caller's order, repeats included;
- a text seen before is not sent again; the memo keeps at most `max_entries` vectors.
"""

from __future__ import annotations

import numpy as np
import pytest

from bench.providers.embed_memo import MemoEmbedder

TEXTS = [
    "Caroline went to the LGBTQ support group yesterday.",
    "short",
    "",
    " ".join(f"word{i}" for i in range(700)),  # past the tokenizer's length
    "Melanie: I painted a sunrise over the lake last week! [shares a photo: a lake]",
    "Caroline went to the LGBTQ support group yesterday.",  # a repeat in the same call
]


class _Counting:
    """An embedder that records every text it is asked for."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.model, self.dim = "counting", 256
        self.asked: list[str] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.asked.extend(texts)
        return self.inner.embed(texts)  # type: ignore[attr-defined, no-any-return]


@pytest.fixture(scope="module")
def wordllama() -> object:
    from bench.providers.offline_embed import WordLlamaEmbedder

    return WordLlamaEmbedder()


def test_wordllama_embeds_a_text_alike_alone_and_in_any_batch(wordllama: object) -> None:
    batch = wordllama.embed(TEXTS)  # type: ignore[attr-defined]
    for i, text in enumerate(TEXTS):
        alone = wordllama.embed([text])[0]  # type: ignore[attr-defined]
        assert np.array_equal(alone, batch[i])
    reordered = wordllama.embed(TEXTS[::-1])  # type: ignore[attr-defined]
    assert np.array_equal(reordered[::-1], batch)


def test_the_memo_returns_the_embedders_vectors_and_sends_each_text_once(
    wordllama: object,
) -> None:
    counting = _Counting(wordllama)
    memo = MemoEmbedder(counting)
    direct = wordllama.embed(TEXTS)  # type: ignore[attr-defined]
    first = memo.embed(TEXTS)
    assert first.dtype == np.float32 and np.array_equal(first, direct)
    assert len(counting.asked) == len(set(TEXTS))  # the repeat was not sent
    again = memo.embed([TEXTS[4], "a new text", TEXTS[0]])
    assert counting.asked[len(set(TEXTS)) :] == ["a new text"]
    assert np.array_equal(again[0], direct[4]) and np.array_equal(again[2], direct[0])
    assert memo.embed([]).shape == (0, 256)


def test_the_memo_keeps_at_most_its_entries_least_recently_used_out(wordllama: object) -> None:
    counting = _Counting(wordllama)
    memo = MemoEmbedder(counting, max_entries=2)
    memo.embed(["a", "b"])
    memo.embed(["a"])  # a is now the most recently used
    memo.embed(["c"])  # b goes
    memo.embed(["a", "b"])
    assert counting.asked == ["a", "b", "c", "b"]
