"""LoCoMo (`locomo10.json`) as suites.

One suite per conversation, turns as memories, `dia_id` evidence as relevant ids, categories as
question types (official labels). Category 5 (adversarial) questions are abstentions: they have no
evidence to retrieve.
"""

from __future__ import annotations

from pathlib import Path

from bench.loaders import load_locomo
from bench.suite.adapters.dialogue import conversation_suite
from bench.suite.model import Suite
from bench.types import Conversation, Question

LABELS = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


def load(path: Path, split: str) -> list[Suite]:
    """Every conversation of the file as a suite (`split` is unused)."""
    dataset = load_locomo(path)
    return [
        conversation_suite(c, "locomo", _evidence, _type, lambda q: q.category == 5)
        for c in dataset.conversations
    ]


def _evidence(question: Question, conversation: Conversation) -> tuple[str, ...]:
    return () if question.category == 5 else question.evidence


def _type(question: Question) -> str:
    return LABELS.get(question.category, str(question.category))
