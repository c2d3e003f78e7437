"""Real token counts with the Llama-2 tokenizer shipped in the WordLlama wheel."""

from __future__ import annotations

from functools import cached_property, lru_cache
from typing import Any

COUNT_BATCH = 1
"""Texts encoded per call by `count_many`: one, since a batch's rayon workers each keep
an allocator arena (~125 MB left resident after a 10M-token suite at 256 texts a call,
~45 MB at one; as fast on 2 cores)."""


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
        """Token counts for many texts, `COUNT_BATCH` texts per call.

        An encoding keeps ids, offsets and token strings (~100 bytes a token), so one
        call over a 10M-token suite held ~1 GB; batches keep that to one batch's worth.
        """
        counts: list[int] = []
        for start in range(0, len(texts), COUNT_BATCH):
            batch = texts[start : start + COUNT_BATCH]
            encoded = self._tokenizer.encode_batch(batch, add_special_tokens=False)
            counts.extend(len(e.ids) for e in encoded)
        return counts

    def truncate_left(self, text: str, max_tokens: int) -> tuple[str, bool]:
        """Keep the last `max_tokens` tokens of `text`; return (text, was_truncated).

        A text that fits is returned as it is after a (line by line, memoised) count;
        one encode of a whole transcript costs ~0.2 s, since BPE runs over it as one word.
        A longer one is cut line by line from the end (`_tail_start`): only the line the
        cut falls in is encoded, so a 10M-token transcript is never encoded whole (that
        encoding alone held ~100 bytes per token, GBs at 10M tokens).
        """
        if self.count(text) <= max_tokens:
            return text, False
        tokenizer = self._tokenizer
        first, newline, _ = text.partition("\n")
        if not newline or not first or tokenizer.token_to_id("\n") is not None:
            enc = tokenizer.encode(text, add_special_tokens=False)
            if len(enc.ids) <= max_tokens:
                return text, False
            return text[enc.offsets[len(enc.ids) - max_tokens][0] :].lstrip(), True
        return text[_tail_start(tokenizer, text, max_tokens) :].lstrip(), True

    def starts(self, text: str) -> tuple[int, ...]:
        """Character offset where each token of `text` starts.

        Memoised: the raw arm's transcript is the same for every question of a
        conversation, and the context budgets cut it once per budget.
        """
        return _starts_cached(self._tokenizer, text)


def _tail_start(tokenizer: Any, text: str, max_tokens: int) -> int:
    r"""Where the last `max_tokens` tokens of `text` begin, as `encode(text).offsets` gives it.

    By `_line_tokens`' identity, the whole text's tokens are the first line's, then per
    later line `<0x0A>` and that line's own tokens: so lines are counted from the end
    until the budget is spent, and only the line the cut falls in is encoded (as
    "\n" + line: ["▁", <0x0A>, its tokens], offsets in that string). A cut right after a
    line break lands on the break, which the caller's `lstrip` removes, as before.
    """
    kept, end = 0, len(text)
    while True:
        start = text.rfind("\n", 0, end) + 1  # 0: the first line
        line = text[start:end]
        count = _line_tokens(tokenizer, line) if start else _first_line_tokens(tokenizer, line)
        need = max_tokens - kept
        if need <= 0:
            return end
        if count > need:
            head = "\n" if start else ""
            enc = tokenizer.encode(head + line, add_special_tokens=False)
            return start - len(head) + int(enc.offsets[len(enc.ids) - need][0])
        kept += count
        end = start - 1


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
