"""Suspect facts: repeated within an exchange or not grounded in it, counted and degrading."""

from __future__ import annotations

from pathlib import Path

from arms.neuromorphic.exchange import Exchange
from arms.neuromorphic.extract_llm import LLMExtractor
from arms.neuromorphic.grounding import duplicates, ungrounded
from arms.neuromorphic.records import FactDraft, Tier
from bench.result_parts import MAX_DUPLICATE_SHARE, Health
from bench.scoring.health import (
    arm_total,
    degraded_warnings,
    from_stats,
    table_from_json,
    table_to_json,
)
from bench.types import Turn
from tests.arms.test_engine_support import engine, tool_result
from tests.support.fake_chat import FakeChat

MAY_8 = "1:56 pm on 8 May, 2023"
EXCHANGE = Exchange(
    1,
    MAY_8,
    (
        Turn("Ann", "I sold my old bicycle yesterday and bought a canoe.", "D1:1", 1),
        Turn("Ben", "A canoe! Where will you paddle?", "D1:2", 1),
    ),
)


def draft(content: str, entity: str = "Ann / bicycle") -> FactDraft:
    return FactDraft(entity, content, Tier.ACTIVE, None, (), None, ("D1:1",))


def test_duplicates_are_repeats_of_an_earlier_fact_of_the_same_exchange() -> None:
    sold = draft("Ann sold her old bicycle on 7 May 2023.")
    again = draft("ann SOLD her old bicycle on 7 May 2023")  # same words, other case
    canoe = draft("Ann bought a canoe.", "Ann / canoe")
    assert duplicates([sold, canoe, again, sold]) == 2
    assert duplicates([sold, canoe]) == 0


def test_ungrounded_facts_have_words_the_exchange_never_said() -> None:
    grounded = draft("Ann sold her old bicycle on Sunday, 7 May 2023.")  # a resolved date
    invented = draft("Ann adopted three kittens from the shelter in Porto.", "Ann / pets")
    partly = draft("Ann bought a canoe to paddle on the lake.", "Ann / canoe")
    assert ungrounded([grounded, partly], EXCHANGE) == 0
    assert ungrounded([grounded, invented, invented], EXCHANGE) == 2


def test_engine_counts_suspect_facts_into_the_health(tmp_path: Path) -> None:
    """Four identical invented facts for one exchange: 3 duplicates, 4 ungrounded, degraded."""
    item = {
        "entity_name": "Ann / pets",
        "fact_content": "Ann adopted three kittens in Porto.",
        "memory_type": "ActiveContext",
        "related_entities": [],
    }
    mem = engine(tmp_path, LLMExtractor(FakeChat(tool_result({"items": [item] * 4}))))
    mem.process_turn("Ann", "I sold my old bicycle yesterday.", date_time=MAY_8)
    health = from_stats(mem.stats())
    mem.close()
    assert health is not None
    assert (health.facts, health.duplicate, health.ungrounded) == (4, 3, 4)
    assert health.failed == 0 and health.degraded
    assert table_from_json(table_to_json({"a": {"c": health}})) == {"a": {"c": health}}
    assert degraded_warnings({"a": {"c": health}}) == [
        "arm a conversation c: extraction degraded — 0 of 1 exchanges failed, 4 facts stored, "
        "3 duplicate, 4 ungrounded; via tools"
    ]


def test_quality_thresholds_and_plain_form() -> None:
    clean = Health(10, 0, 20)
    assert clean.to_json() == {"exchanges": 10, "failed": 0, "facts": 20}  # old form kept
    assert not Health(10, 0, 20, duplicate=5).degraded  # 25% is tolerated
    assert Health(10, 0, 20, duplicate=6).degraded and MAX_DUPLICATE_SHARE < 6 / 20
    assert not Health(10, 0, 20, ungrounded=5).degraded
    assert Health(10, 0, 20, ungrounded=6).degraded
    total = arm_total({"c1": Health(1, 0, 2, duplicate=1), "c2": Health(1, 0, 2, ungrounded=2)})
    assert (total.duplicate, total.ungrounded, total.facts) == (1, 2, 4)
    assert Health(1, 0, 2, duplicate=1).to_json()["duplicate"] == 1


def test_rule_based_extraction_is_not_checked(tmp_path: Path) -> None:
    mem = engine(tmp_path)
    mem.process_turn("Ann", "I sold my old bicycle yesterday.", date_time=MAY_8)
    stats = mem.stats()
    mem.close()
    assert stats["facts"] >= 1 and stats["facts_duplicate"] == stats["facts_ungrounded"] == 0
