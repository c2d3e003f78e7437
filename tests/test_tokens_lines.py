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
