"""The context budget rule: any arm's context cut to B tokens (methodology §3.5).

One rule for every arm, applied at answer time to the context the arm returned (or
`phase=predict` stored), so a budget costs no new ingestion and no new retrieval:

* a context of at most B tokens is kept whole;
* a whole-context arm (no ranked items: raw) keeps its **most recent** B tokens, as its
  own `answer.max_context_tokens` rule does (`TokenCounter.truncate_left`);
* a ranked arm keeps its items **in its own rank order**, whole items first, the last
  one cut: when the rendered text shows the items best first (rag `order=score`, the
  neuromorphic `<FACTS>` block, a live service's own text), that is the first B tokens
  of the text the answerer sees, so the arm's own layout (headers, dates, hydrated
  sources) stays; the tail of the block (a closing tag) goes with the cut;
* an arm that shows its items in another order (rag `order=time`) has its items chosen
  by rank under the same rule (each item's tokens plus a blank line between items),
  then shown in its own display order, joined by a blank line.

Token counts are the run's tokenizer (`bench.tokens.TokenCounter`).
"""

from __future__ import annotations

from dataclasses import replace

from bench.tokens import TokenCounter
from bench.types import Context, ContextItem

SEPARATOR = "\n\n"
"""Between items re-joined for an arm whose display order is not its rank order."""
SEPARATOR_TOKENS = 2
"""Tokens of `SEPARATOR`: a line break is one byte token (<0x0A>) of the tokenizer."""


def cut_context(context: Context, budget: int, tokens: TokenCounter) -> Context:
    """`context` cut to at most `budget` tokens by the budget rule (module docstring).

    The cut context says `truncated=True` when anything was cut. A cut lands on a token
    boundary of the whole text; re-tokenised, the kept text can count a token more (the
    tokenizer's word-start mark on its first piece), so the cut is retried a token
    shorter until it counts at most `budget`.
    """
    if budget <= 0:
        raise ValueError(f"context budget must be > 0, got {budget}")
    starts = tokens.starts(context.text)
    if len(starts) <= budget:
        return context
    keep = budget
    text = _cut(context, keep, starts, tokens)
    while keep > 1 and tokens.count(text) > budget:
        keep -= 1
        text = _cut(context, keep, starts, tokens)
    return replace(context, text=text, truncated=True)


def _cut(context: Context, keep: int, starts: tuple[int, ...], tokens: TokenCounter) -> str:
    """The text of `context` cut to `keep` tokens of its own tokenisation (`starts`)."""
    if not context.items:
        return context.text[starts[len(starts) - keep] :].lstrip()
    if _shown_in_rank_order(context.text, context.items):
        return context.text[: starts[keep]].rstrip()
    return _by_rank(context.text, context.items, keep, tokens)


def _shown_in_rank_order(text: str, items: tuple[ContextItem, ...]) -> bool:
    """True unless every item's text is in `text` and they appear out of rank order.

    A service that renders its own text (items not found verbatim) counts as rank order:
    the text the answerer sees is cut from its start, the service's best first.
    """
    places = [text.find(item.text) if item.text else -1 for item in items]
    if any(p < 0 for p in places):
        return True
    return places == sorted(places)


def _by_rank(text: str, items: tuple[ContextItem, ...], budget: int, tokens: TokenCounter) -> str:
    """Items chosen best first under `budget` (last one cut), shown in display order."""
    room, gap = budget, SEPARATOR_TOKENS
    kept: list[tuple[int, str]] = []
    for item in items:
        need = tokens.count(item.text) + (gap if kept else 0)
        if need <= room:
            kept.append((text.find(item.text), item.text))
            room -= need
            continue
        room -= gap if kept else 0
        if room > 0:
            starts = tokens.starts(item.text)
            end = starts[room] if room < len(starts) else len(item.text)
            kept.append((text.find(item.text), item.text[:end].rstrip()))
        break
    return SEPARATOR.join(part for _, part in sorted(kept, key=lambda p: p[0]))
