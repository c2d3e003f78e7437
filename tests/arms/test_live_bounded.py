"""A live arm's buffers do not grow with the conversation (issue 39).

The call log used to keep every call's latency in a list for the arm's lifetime: one
float per write and per search, over every conversation of a run (~17,000 writes for a
10M-token conversation). It now keeps a count and a sum per call kind. The turn ids
that map returned markers back to turns were kept per namespace for every unit of the
run (a LongMemEval run: every question's haystack); now only the current unit's.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import pytest

from arms.http import HttpArm, HttpConfig
from arms.neuromorphic.exchange import exchanges
from bench.arm import ArmServices
from bench.loaders.locomo import load_locomo
from bench.tokens import TokenCounter
from bench.types import Conversation
from tests.support.e2e_support import ROOT
from tests.support.hostile_service import HostileService

SMOKE = ROOT / "datasets/fixtures/smoke_locomo.json"


def test_the_call_log_keeps_no_value_per_call(tmp_path: Path) -> None:
    conversations = load_locomo(SMOKE, "smoke").conversations
    with HostileService() as service:
        services = ArmServices(cast(Any, None), TokenCounter(), tmp_path, tmp_path)
        arm = HttpArm("http", HttpConfig(base_url=service.url, probe=False), services)
        stats = []
        for conv in conversations:
            stats.append(arm.ingest(conv))
            for question in conv.questions:
                arm.retrieve(question)
        held = [v for table in vars(arm.calls).values() for v in table.values()]
        arm.close()
    assert [s["writes"] for s in stats] == [len(list(exchanges(c))) for c in conversations]
    assert all(s["write_ms"] > 0 for s in stats)
    assert held and all(isinstance(v, int | float) for v in held)  # no list per kind


@pytest.mark.slow
def test_only_the_current_units_turn_ids_are_kept(tmp_path: Path) -> None:
    conversations = load_locomo(SMOKE, "smoke").conversations
    runs = [renamed(c, f"{c.conversation_id}-{i}") for i in range(2) for c in conversations]
    with HostileService() as service:
        services = ArmServices(cast(Any, None), TokenCounter(), tmp_path, tmp_path)
        arm = HttpArm("http", HttpConfig(base_url=service.url, probe=False), services)
        held = []
        for conv in runs:
            arm.ingest(conv)
            mapped = [arm.retrieve(q).items for q in conv.questions[:2]]
            assert all(i.source_ids for items in mapped for i in items)
            held.append(sum(len(ids) for ids in arm._turn_ids.values()))
        arm.close()
    assert held == [len(c.turns()) for c in runs]  # was the sum over every unit so far


def renamed(conversation: Conversation, cid: str) -> Conversation:
    """`conversation` (and its questions) under the id `cid`: one more unit of a run."""
    questions = tuple(replace(q, conversation_id=cid) for q in conversation.questions)
    return replace(conversation, conversation_id=cid, questions=questions)
