"""Dataset statistics: the figures methodology §1 pins for LoCoMo."""

from __future__ import annotations

from collections import Counter
from typing import Any

from bench.types import Dataset


def dataset_stats(ds: Dataset) -> dict[str, Any]:
    """Counts of conversations, sessions, turns, image turns, questions and per category."""
    turns = [t for c in ds.conversations for t in c.turns()]
    categories = Counter(q.category for q in ds.questions())
    return {
        "conversations": len(ds.conversations),
        "sessions": sum(len(c.sessions) for c in ds.conversations),
        "turns": len(turns),
        "image_turns": sum(1 for t in turns if t.image_caption),
        "questions": sum(categories.values()),
        "categories": dict(sorted(categories.items())),
    }
