"""BEAM tier folders (`<n>/chat.json` + probing questions) as suites: one per conversation.

Read by the BEAM loader (bench/loaders/beam.py), so the checks and ids are the run's:
every message is a memory (id = its upstream message id, date = its batch's time anchor,
session = the batch), every probing question a query whose relevant ids are its
`source_chat_ids` (all groups of an object, e.g. both the original and the updated
statement of a knowledge update). Abstention questions carry no ids and are abstentions;
ids naming no message are dropped and a question left with none is skipped (logged),
never scored as a miss. The ideal answer is the expected answer, the ability the type.
Rubric items are not memory ids, so they stay with `bench.run`'s judges.

The tier (it only labels suite names, `beam-<tier>-<n>`) is `suite.split` when that
names one (`128k|500k|1m|10m`), else read from the folder's name (`beam-100k`, `1M`, …),
else `128k`.
"""

from __future__ import annotations

from pathlib import Path

from bench.loaders.beam import load_beam
from bench.loaders.beam_source import TIERS
from bench.suite.adapters.dialogue import conversation_suite
from bench.suite.model import Suite
from bench.types import Conversation, Question


def load(path: Path, split: str) -> list[Suite]:
    """Every conversation of the BEAM tier folder at `path` as a suite."""
    dataset = load_beam(path, "beam", tier_label(path, split))
    return [
        conversation_suite(c, "beam", _evidence, lambda q: q.question_type or "unknown")
        for c in dataset.conversations
    ]


def tier_label(path: Path, split: str) -> str:
    """`split` when it names a tier, else the tier the folder's name gives, else `128k`."""
    if split.lower() in TIERS:
        return split.lower()
    name = path.resolve().name.lower()
    for label, tier in TIERS.items():
        if name in (tier.folder, tier.upstream.lower(), f"beam-{label}"):
            return label
    return "128k"


def _evidence(question: Question, conversation: Conversation) -> tuple[str, ...]:
    return () if question.is_abstention else question.evidence
