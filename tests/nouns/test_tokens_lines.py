"""Token counts taken line by line (memoised) equal counting the whole text at once."""

from __future__ import annotations

import random

from bench.tokens import TokenCounter

LINES = [
    "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
    "Melanie: That's amazing, Caroline! How did it feel?",
    "<FACTS>",
    "- Caroline went to a LGBTQ support group (7 May 2023). (valid 8 May 2023 – present)",
    "  > (8 May 2023) Caroline: I went to a LGBTQ support group yesterday.",
    "",
    " ",
    "   three leading spaces",
    "trailing spaces   ",
    "\r",
    "é ü 日本語 🙂 emoji",
    "\ttab",
    "</FACTS>",
]


def test_line_by_line_count_equals_one_encode() -> None:
    counter = TokenCounter()
    tokenizer = counter._tokenizer
    rng = random.Random(7)
    for _ in range(400):
        text = "\n".join(rng.choice(LINES) for _ in range(rng.randint(1, 12)))
        text += "\n" * rng.randint(0, 2)
        whole = len(tokenizer.encode(text, add_special_tokens=False).ids) if text else 0
        assert counter.count(text) == whole, repr(text)


def _cut_by_one_encode(tokenizer: object, text: str, max_tokens: int) -> tuple[str, bool]:
    """The reference: encode the whole text, keep from the first of its last tokens."""
    enc = tokenizer.encode(text, add_special_tokens=False)  # type: ignore[attr-defined]
    if len(enc.ids) <= max_tokens:
        return text, False
    return text[enc.offsets[len(enc.ids) - max_tokens][0] :].lstrip(), True


def test_left_truncation_line_by_line_equals_one_encode() -> None:
    counter = TokenCounter()
    tokenizer = counter._tokenizer
    rng = random.Random(11)
    for _ in range(150):
        text = "Header line\n" + "\n".join(rng.choice(LINES) for _ in range(rng.randint(1, 15)))
        total = len(tokenizer.encode(text, add_special_tokens=False).ids)
        for budget in {1, 2, 3, total - 1, total, rng.randint(1, total)}:
            if budget >= 1:
                got = counter.truncate_left(text, budget)
                assert got == _cut_by_one_encode(tokenizer, text, budget), (text, budget)


class _Recording:
    """A tokenizer that records the longest text it was asked to encode."""

    def __init__(self, inner: object) -> None:
        self.inner, self.longest = inner, 0

    def encode(self, text: str, **kwargs: object) -> object:
        self.longest = max(self.longest, len(text))
        return self.inner.encode(text, **kwargs)  # type: ignore[attr-defined]

    def token_to_id(self, token: str) -> object:
        return self.inner.token_to_id(token)  # type: ignore[attr-defined]


def test_a_long_transcript_is_cut_without_encoding_it_whole() -> None:
    counter = TokenCounter()
    recording = _Recording(counter._tokenizer)
    counter.__dict__["_tokenizer"] = recording  # the cached property's slot
    text = "[Session 1]\n" + "\n".join(f"user: message {i} about the garden" for i in range(3000))
    kept, truncated = counter.truncate_left(text, 500)
    assert truncated and kept.endswith("message 2999 about the garden")
    assert recording.longest < 200  # one line at a time, never the ~110,000 characters


class _Batches:
    """A tokenizer that records how many texts each batched encode was given."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.sizes: list[int] = []

    def encode_batch(self, texts: list[str], **kwargs: object) -> object:
        self.sizes.append(len(texts))
        return self.inner.encode_batch(texts, **kwargs)  # type: ignore[attr-defined]


def test_many_texts_are_counted_in_bounded_batches_with_the_same_counts() -> None:
    from bench.tokens import COUNT_BATCH

    counter = TokenCounter()
    texts = [LINES[i % len(LINES)] + f" {i}" for i in range(2 * COUNT_BATCH + 7)]
    expected = [counter.count(t) for t in texts]
    recording = _Batches(counter._tokenizer)
    counter.__dict__["_tokenizer"] = recording
    assert counter.count_many(texts) == expected
    assert counter.count_many([]) == []
    assert max(recording.sizes) == COUNT_BATCH and sum(recording.sizes) == len(texts)
