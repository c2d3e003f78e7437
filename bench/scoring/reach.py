"""Reachability of the gold answer in a context: could any reader have answered?

    gold-token recall = |content terms of gold ∩ content terms of context| / |content terms of gold|

(stemmed content words, `bench.text.content_terms`; 1.0 = every gold word is somewhere
in the context). It bounds what an extractive reader can score, so offline runs show it
beside accuracy.
"""

from __future__ import annotations

from bench.text import content_terms


def gold_token_recall(gold: str | None, context_text: str) -> float | None:
    """Share of the gold answer's content terms present in the context; None without gold."""
    if not gold:
        return None
    wanted = set(content_terms(gold))
    if not wanted:
        return None
    return len(wanted & context_terms(context_text)) / len(wanted)


def context_terms(text: str) -> set[str]:
    """`set(content_terms(text))`, gathered line by line.

    No word spans a line break, so the union over lines is the same set; lines recur
    across questions (the same facts and turns), and `content_terms` memoises each.
    """
    return set().union(*(content_terms(line) for line in text.split("\n")))
