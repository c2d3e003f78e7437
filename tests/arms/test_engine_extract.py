"""Exchanges, the offline rule-based extractor, the LLM extractor and its error handling."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import jsonschema
import pytest

from arms.neuromorphic.cut_reply import closed_items
from arms.neuromorphic.exchange import Exchange, exchanges
from arms.neuromorphic.extract_llm import (
    CAP_BASE_TOKENS,
    FACT_MAX_CHARS,
    MAX_ITEMS,
    TOOL_NAME,
    UPDATE_MEMORY_TOOL,
    LLMExtractor,
    completion_cap,
    extraction_schema,
)
from arms.neuromorphic.extract_rules import RuleExtractor
from arms.neuromorphic.records import FactDraft, Tier
from bench.dates import resolve_dates
from bench.errors import ConfigError
from bench.types import ChatResult, Turn
from tests.arms.test_engine_support import conversation, engine, tool_result
from tests.support.fake_chat import FakeChat

MAY_8 = "1:56 pm on 8 May, 2023"


def test_exchange_is_a_speaker_a_turn_plus_the_b_turns_after_it() -> None:
    conv = conversation(
        [
            (MAY_8, [("Ann", "a1"), ("Bob", "b1"), ("Bob", "b2"), ("Ann", "a2"), ("Ann", "a3")]),
            ("2:00 pm on 9 May, 2023", [("Bob", "b3"), ("Ann", "a4"), ("Bob", "b4")]),
        ]
    )
    got = [(e.session, e.date_time[-11:], [t.text for t in e.turns]) for e in exchanges(conv)]
    assert got == [
        (1, "8 May, 2023", ["a1", "b1", "b2"]),
        (1, "8 May, 2023", ["a2"]),
        (1, "8 May, 2023", ["a3"]),
        (2, "9 May, 2023", ["b3"]),  # a session opening with speaker_b: its own exchange and date
        (2, "9 May, 2023", ["a4", "b4"]),
    ]
    assert exchanges(conv)[3].text() == "[Session 2 — 2:00 pm on 9 May, 2023]\nBob: b3"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I went there yesterday", "I went there yesterday (7 May 2023)"),
        ("Last year I painted", "Last year (2022) I painted"),
        ("We leave next month", "We leave next month (June 2023)"),
        ("It was last week", "It was last week (the week before 8 May 2023)"),
        ("I ran last Saturday", "I ran last Saturday (6 May 2023)"),
        ("two years ago we met", "two years ago (2021) we met"),
    ],
)
def test_relative_dates_are_resolved_against_the_session_date(text: str, expected: str) -> None:
    assert resolve_dates(text, date(2023, 5, 8))[0] == expected


def _facts(text: str, speaker: str = "Ann", caption: str | None = None) -> list[FactDraft]:
    turn = Turn(speaker, text, "D1:3", 1, image_caption=caption)
    return list(RuleExtractor().extract(Exchange(1, MAY_8, (turn,)), []).facts)


def test_rules_write_person_prefixed_facts_with_resolved_dates() -> None:
    (fact,) = _facts("I went to a LGBTQ support group yesterday.")
    assert fact.fact_content == "Ann went to a LGBTQ support group yesterday (7 May 2023)."
    assert fact.entity_name.startswith("Ann: ") and fact.memory_type == Tier.ACTIVE
    assert fact.valid_date == "7 May 2023" and fact.source_ids == ("D1:3",)


def test_rules_skip_questions_and_small_talk_but_keep_captions() -> None:
    facts = _facts("Hey Bob! How are you doing today?", caption="a photo of a red bicycle")
    assert [f.fact_content for f in facts] == ["Ann shared a photo of a red bicycle."]


@pytest.mark.parametrize(
    ("text", "entity", "tier"),
    [
        ("I live in Paris.", "Ann residence", Tier.CORE),
        ("We moved to Berlin last month.", "Ann residence", Tier.CORE),
        ("I started working as a teacher.", "Ann job", Tier.CORE),
        ("My favorite food is sushi.", "Ann favorite food", Tier.CORE),
        ("My car is a red Fiat.", "Ann car", Tier.ACTIVE),
        ("I am engaged to Miguel!", "Ann relationship status", Tier.CORE),
    ],
)
def test_rules_name_attributes_canonically(text: str, entity: str, tier: Tier) -> None:
    (fact,) = _facts(text)
    assert (fact.entity_name, fact.memory_type) == (entity, tier)


def test_rules_tier_heuristics() -> None:
    assert _facts("I'm a nurse at the city hospital.")[0].memory_type == Tier.CORE
    assert _facts("I'm so tired right now after the long shift.")[0].memory_type == Tier.EPHEMERAL
    assert _facts("I painted a lake sunrise with bright colours.")[0].memory_type == Tier.ACTIVE


def test_rules_link_the_facts_of_one_exchange() -> None:
    facts = _facts(
        "I live in Paris. I painted a lake sunrise last year. My favorite food is sushi."
    )
    names = [f.entity_name for f in facts]
    assert len(facts) == 3
    for fact in facts:
        assert set(fact.related_entities) == set(names) - {fact.entity_name}


def test_the_rule_memo_serves_the_next_arm_of_a_unit_and_stays_bounded() -> None:
    """A unit as long as LoCoMo's longest (360 exchanges) is extracted once for both
    memory arms; a conversation longer than `RULE_MEMO` keeps only `RULE_MEMO` of them."""
    from arms.neuromorphic.extract_rules import RULE_MEMO, rule_facts

    def unit(n: int, tag: str) -> list[tuple[Turn, ...]]:
        return [(Turn("Ann", f"I bake {tag} pie number {i}.", f"D1:{i}", 1),) for i in range(n)]

    rule_facts.cache_clear()
    for arm in ("neuromorphic", "tuned"):
        for turns in unit(360, "apple"):
            rule_facts(MAY_8, turns)
        assert rule_facts.cache_info().misses == 360, arm  # the second arm: all hits
    assert rule_facts.cache_info().hits == 360
    for turns in unit(RULE_MEMO + 500, "plum"):
        rule_facts(MAY_8, turns)
    assert rule_facts.cache_info().currsize == RULE_MEMO
    rule_facts.cache_clear()


def test_rules_new_value_of_the_same_attribute_overrides(tmp_path: Path) -> None:
    conv = conversation(
        [
            (MAY_8, [("Ann", "I live in Paris."), ("Bob", "Nice city.")]),
            ("2:00 pm on 1 July, 2023", [("Ann", "I moved to Berlin in June.")]),
        ]
    )
    mem = engine(tmp_path, RuleExtractor())
    mem.ingest(conv)
    history = mem.history("Ann residence")
    assert [f.fact_content for f in history] == [
        "Ann lives in Paris.",
        "Ann moved to Berlin in June.",
    ]
    assert history[0].invalid_reason == "superseded" and history[0].invalid_date == "1 July 2023"
    assert "Paris" not in mem.render(mem.recall("Where does Ann live?"), "Where does Ann live?")
    mem.close()


def test_llm_extractor_sends_one_tool_call_and_parses_every_field() -> None:
    items = [
        {
            "entity_name": "Ann / home",
            "fact_content": "Ann moved to Berlin on 7 May 2023.",
            "memory_type": "CoreAnchor",
            "overrides_entity": "Ann / old home",
            "related_entities": ["Ann / job"],
            "valid_at": "7 May 2023",
        },
    ]
    chat = FakeChat(tool_result({"items": items}))
    ex = Exchange(1, MAY_8, (Turn("Ann", "I moved to Berlin yesterday", "D1:1", 1),))
    out = LLMExtractor(chat).extract(ex, [])
    assert chat.calls[0]["tools"] == [UPDATE_MEMORY_TOOL] and len(chat.calls) == 1
    assert "Session date: 1:56 pm on 8 May, 2023" in chat.calls[0]["messages"][1]["content"]
    (fact,) = out.facts
    assert (fact.entity_name, fact.memory_type, fact.overrides_entity) == (
        "Ann / home",
        Tier.CORE,
        "Ann / old home",
    )
    assert fact.related_entities == ("Ann / job",) and fact.valid_date == "7 May 2023"
    assert fact.source_ids == ("D1:1",) and out.errors == ()
    assert out.usage.prompt_tokens == 100


@pytest.mark.parametrize(
    ("result", "kind"),
    [
        (tool_result('{"items": [{"entity_name": '), "bad_json"),
        (tool_result({"facts": []}), "bad_arguments"),
        (ChatResult(text="Sure! Here are the facts...", model="fake-llm"), "no_tool_call"),
    ],
)
def test_llm_extractor_records_malformed_calls_with_raw_text(result: ChatResult, kind: str) -> None:
    ex = Exchange(1, MAY_8, (Turn("Ann", "hello", "D1:1", 1),))
    out = LLMExtractor(FakeChat(result)).extract(ex, [])
    assert out.facts == () and [e.kind for e in out.errors] == [kind]
    raw = result.tool_calls[0]["arguments"] if result.tool_calls else result.text
    assert out.errors[0].raw == raw


def test_llm_extractor_keeps_good_items_and_reports_bad_ones(tmp_path: Path) -> None:
    good = {
        "entity_name": "Ann / pet",
        "fact_content": "Ann has a cat.",
        "memory_type": "ActiveContext",
        "related_entities": [],
    }
    bad = {"entity_name": "Ann / mood", "fact_content": "Ann is happy.", "memory_type": "Mood"}
    chat = FakeChat(tool_result({"items": [good, bad]}), tool_result("{oops"))
    mem = engine(tmp_path, LLMExtractor(chat))
    mem.process_turn("Ann", "I have a cat and I am happy", date_time=MAY_8)
    mem.process_turn("Ann", "Bye", date_time=MAY_8)
    assert [f.fact_content for f in mem.history("Ann / pet")] == ["Ann has a cat."]
    errors = mem.archive.errors()
    assert [(e["turn"], e["kind"]) for e in errors] == [(1, "bad_item"), (2, "bad_json")]
    assert "Mood" in errors[0]["raw"] and errors[1]["raw"] == "{oops"
    assert mem.counters["extraction_errors"] == 2 and mem.counters["extract_prompt_tokens"] == 200
    assert TOOL_NAME == "update_memory"
    mem.close()


class SchemaChat(FakeChat):
    """A FakeChat on an endpoint that honours JSON Schemas."""

    json_schema = True


def test_ignored_tools_are_asked_again_with_the_schema_for_the_rest_of_the_run() -> None:
    item = {
        "entity_name": "Ann / city",
        "fact_content": "Ann lives in Berlin.",
        "memory_type": "CoreAnchor",
        "overrides_entity": None,
        "related_entities": [],
        "valid_at": None,
    }
    prose = ChatResult(text="Sure! Ann lives in Berlin.", model="fake-llm")
    as_json = ChatResult(text=json.dumps({"items": [item]}), model="fake-llm")
    chat = SchemaChat(prose, as_json, as_json)
    extractor = LLMExtractor(chat)
    ex = Exchange(1, MAY_8, (Turn("Ann", "I live in Berlin", "D1:1", 1),))
    first, second = extractor.extract(ex, []), extractor.extract(ex, [])
    assert (first.mode, first.tools_ignored, len(first.facts), first.errors) == (
        "json_schema",
        True,
        1,
        (),
    )
    assert (second.mode, second.tools_ignored) == ("json_schema", False)
    assert [c["tools"] is not None for c in chat.calls] == [True, False, False]
    schema_call = chat.calls[1]
    assert schema_call["options"].json_schema.name == TOOL_NAME
    assert "call the tool" not in schema_call["messages"][0]["content"]
    assert '{"items": [...]}' in schema_call["messages"][0]["content"]
    cap = schema_call["options"].max_tokens
    assert cap == completion_cap(ex) == CAP_BASE_TOKENS + len(ex.text())
    item = extraction_schema().schema["properties"]["items"]["items"]
    assert set(item["required"]) == set(item["properties"]) and not item["additionalProperties"]


def test_the_extraction_schema_is_bounded() -> None:
    """Every array has maxItems and every string maxLength, in tools and schema mode alike."""
    schema = extraction_schema().schema
    items = schema["properties"]["items"]
    assert items["maxItems"] == MAX_ITEMS
    assert (
        UPDATE_MEMORY_TOOL["function"]["parameters"]["properties"]["items"]["maxItems"] == MAX_ITEMS
    )
    fields = items["items"]["properties"]
    for name, spec in fields.items():
        if spec["type"] == "array":
            assert spec["maxItems"] and spec["items"]["maxLength"], name
        elif "enum" not in spec:
            assert spec["maxLength"], name
    fact = {
        "entity_name": "Ilse / bicycle",
        "fact_content": "Ilse sold her bicycle.",
        "memory_type": "ActiveContext",
        "overrides_entity": None,
        "related_entities": [],
        "valid_at": None,
    }
    jsonschema.validate({"items": [fact] * MAX_ITEMS}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"items": [fact] * (MAX_ITEMS + 1)}, schema)
    with pytest.raises(jsonschema.ValidationError):
        long_fact = fact | {"fact_content": "x" * (FACT_MAX_CHARS + 1)}
        jsonschema.validate({"items": [long_fact]}, schema)


def test_without_schema_support_ignored_tools_stay_an_error() -> None:
    prose = ChatResult(text="Sure! Ann lives in Berlin.", model="fake-llm")
    chat = FakeChat(prose)
    out = LLMExtractor(chat).extract(Exchange(1, MAY_8, (Turn("Ann", "hi", "D1:1", 1),)), [])
    assert out.tools_ignored and [e.kind for e in out.errors] == ["no_tool_call"]
    assert len(chat.calls) == 1


def test_a_schema_reply_cut_at_the_cap_is_a_truncated_error() -> None:
    cut = ChatResult(text='{"items": [{"entity_name": "Ann', model="m", finish_reason="length")
    extractor = LLMExtractor(SchemaChat(cut), mode="json_schema")
    out = extractor.extract(Exchange(1, MAY_8, (Turn("Ann", "hi", "D1:1", 1),)), [])
    assert [e.kind for e in out.errors] == ["truncated"] and out.mode == "json_schema"
    assert extractor.version.endswith("+json_schema")


CUT_AFTER_TWO = """{
  "items": [
    {
      "entity_name": "Ann / home",
      "fact_content": "Ann lives in Berlin.",
      "memory_type": "CoreAnchor",
      "overrides_entity": null,
      "related_entities": [
        "Ann",
        "Ann"
      ],
      "valid_at": null
    },
    {
      "entity_name": "Ann / work",
      "fact_content": "Ann works at a bakery.",
      "memory_type": "ActiveContext",
      "overrides_entity": "related_entities",
      "related_entities": [],
      "valid_at": "8 May 2023"
    },
    {
      "entity_name": "Ann",
      "fact_content": "Ann lives in"""


def test_a_cut_reply_keeps_the_items_that_closed_and_reports_the_cut() -> None:
    """The shape of a tiny model's reply at the cap (llama.cpp grammar, pretty-printed)."""
    cut = ChatResult(text=CUT_AFTER_TWO, model="m", finish_reason="length")
    extractor = LLMExtractor(SchemaChat(cut), mode="json_schema")
    out = extractor.extract(Exchange(1, MAY_8, (Turn("Ann", "hi", "D1:1", 1),)), [])
    assert [f.entity_name for f in out.facts] == ["Ann / home", "Ann / work"]
    assert out.facts[1].valid_date == "8 May 2023" and out.facts[0].source_ids == ("D1:1",)
    assert [e.kind for e in out.errors] == ["truncated"]
    assert "kept the 2 complete items" in out.errors[0].message
    assert out.errors[0].raw == CUT_AFTER_TWO


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        (CUT_AFTER_TWO, 2),
        ('{"items": [', 0),
        ('{"items": [1, {"entity_name": "a"}', 0),  # a non-object stops the reading
        ('{"facts": [{"a": 1}, {"b"', 0),  # another shape: nothing is guessed
        ('{"items": [{"a": 1} {"b": 2}', 1),  # no comma: stop after the first
        ('{"items": [' + "[" * 5000, 0),  # deep nesting: the decoder's limit, no traceback
        ('{"items": [{"n": 1' + "0" * 400 + "}, {", 0),  # the untrusted reader's bound on digits
    ],
)
def test_closed_items_reads_only_whole_objects(text: str, kept: int) -> None:
    assert len(closed_items(text)) == kept


def test_a_cut_reply_with_no_closed_item_keeps_nothing() -> None:
    cut = ChatResult(text='{"items": [{"entity_name": "Ann', model="m", finish_reason="length")
    ex = Exchange(1, MAY_8, (Turn("Ann", "hi", "D1:1", 1),))
    out = LLMExtractor(SchemaChat(cut), mode="json_schema").extract(ex, [])
    assert out.facts == ()
    assert [e.message for e in out.errors] == [f"reply hit the {completion_cap(ex)}-token cap"]


def test_unknown_or_unsupported_modes_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="extract_mode=grammar"):
        LLMExtractor(SchemaChat(), mode="grammar")
    with pytest.raises(ConfigError, match="json_schema=true"):
        LLMExtractor(FakeChat(), mode="json_schema")
