"""The LLM extractor: one `update_memory` tool call per exchange (methodology §4 step 3).

The model sees the session date, facts already known about the exchange (so it can
name what a new fact overrides) and the exchange; it must answer with one tool call
whose items carry every field of a record. Anything malformed — no tool call, bad
JSON, an item missing a field or with an unknown memory_type — becomes an
`ExtractionError` holding the raw text; well-formed items of the same call are kept.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from arms.neuromorphic.exchange import Exchange
from arms.neuromorphic.extraction import Extraction, ExtractionError
from arms.neuromorphic.records import Fact, FactDraft, parse_tier
from bench.errors import ProviderError
from bench.providers.base import ChatProvider

PROMPT_VERSION = "neuromorphic-extract-v1"
TOOL_NAME = "update_memory"
_ITEM = {
    "type": "object",
    "properties": {
        "entity_name": {"type": "string"},
        "fact_content": {"type": "string"},
        "memory_type": {
            "type": "string",
            "enum": ["CoreAnchor", "ActiveContext", "EphemeralState"],
        },
        "overrides_entity": {"type": ["string", "null"]},
        "related_entities": {"type": "array", "items": {"type": "string"}},
        "valid_at": {"type": ["string", "null"]},
    },
    "required": ["entity_name", "fact_content", "memory_type", "related_entities"],
}
UPDATE_MEMORY_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": TOOL_NAME,
        "description": "Store the facts of the new exchange in long-term memory.",
        "parameters": {
            "type": "object",
            "properties": {"items": {"type": "array", "items": _ITEM}},
            "required": ["items"],
        },
    },
}
SYSTEM_PROMPT = """You maintain the long-term memory of a conversation. Read the new exchange \
and call the tool update_memory exactly once with every fact worth remembering (an empty \
list if there is none). For each item:
- entity_name: what the fact is about, prefixed with the person it belongs to \
(e.g. "Caroline / hometown"). Reuse the exact entity_name of a known fact when the new \
fact updates it.
- fact_content: one self-contained sentence that names the person. Resolve relative \
dates ("yesterday", "last year", "next month") against the session date and write the \
absolute date into the sentence (e.g. "Caroline went to a support group on 7 May 2023.").
- memory_type: CoreAnchor (identity, lasting traits, relationships), ActiveContext \
(events, plans, ongoing activities) or EphemeralState (passing moods, momentary states).
- overrides_entity: the entity_name of a known fact this one makes out of date, if any.
- related_entities: entity names of other facts this one is connected to.
- valid_at: the date the fact became true when the exchange says so (e.g. "7 May 2023").
Images appear as [shares a photo: caption]; treat the caption as what was shown."""


class LLMExtractor:
    """Fact extraction by a chat model through one `update_memory` tool call."""

    version = PROMPT_VERSION

    def __init__(self, provider: ChatProvider) -> None:
        self.provider = provider
        self.model = provider.model

    def extract(self, exchange: Exchange, known: Sequence[Fact]) -> Extraction:
        """Call the model once and parse its tool call (errors kept, never dropped).

        A call that fails (after the provider's retries) is one failed exchange, recorded
        as a `call_failed` error, never a failed conversation.
        """
        try:
            result = self.provider.complete(
                messages(exchange, known), tools=[UPDATE_MEMORY_TOOL], prompt_version=PROMPT_VERSION
            )
        except ProviderError as exc:
            return Extraction(errors=(ExtractionError("call_failed", str(exc), ""),))
        calls = [c for c in result.tool_calls if c.get("name") == TOOL_NAME]
        if not calls:
            raw = result.text or json.dumps(list(result.tool_calls))
            error = ExtractionError("no_tool_call", f"the model did not call {TOOL_NAME}", raw)
            return Extraction(errors=(error,), usage=result.usage)
        facts: list[FactDraft] = []
        errors: list[ExtractionError] = []
        for call in calls:
            found, bad = parse_arguments(call.get("arguments"), exchange.dia_ids())
            facts.extend(found)
            errors.extend(bad)
        return Extraction(tuple(facts), tuple(errors), result.usage)


def messages(exchange: Exchange, known: Sequence[Fact]) -> list[dict[str, Any]]:
    """The chat messages for one exchange."""
    known_lines = "\n".join(f"- [{f.entity_name}] {f.fact_content}" for f in known) or "(none)"
    user = (
        f"Session date: {exchange.date_time}\n\nKnown facts:\n{known_lines}\n\n"
        f"New exchange:\n{exchange.text()}"
    )
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


def parse_arguments(
    arguments: Any, source_ids: tuple[str, ...]
) -> tuple[list[FactDraft], list[ExtractionError]]:
    """Drafts from one tool call's JSON arguments, plus an error per malformed part."""
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    try:
        data = json.loads(raw) if isinstance(arguments, str) else arguments
    except json.JSONDecodeError as exc:
        return [], [ExtractionError("bad_json", f"arguments are not JSON: {exc}", raw)]
    items = data.get("items") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return [], [ExtractionError("bad_arguments", "arguments lack an 'items' list", raw)]
    drafts: list[FactDraft] = []
    errors: list[ExtractionError] = []
    for item in items:
        draft, problem = parse_item(item, source_ids)
        if draft is not None:
            drafts.append(draft)
        else:
            errors.append(ExtractionError("bad_item", problem, json.dumps(item)))
    return drafts, errors


def parse_item(item: Any, source_ids: tuple[str, ...]) -> tuple[FactDraft | None, str]:
    """One item as a draft, or (None, what is wrong with it)."""
    if not isinstance(item, dict):
        return None, "item is not an object"
    for key in ("entity_name", "fact_content", "memory_type"):
        if not isinstance(item.get(key), str) or not item[key].strip():
            return None, f"item field '{key}' missing or not a non-empty string"
    tier = parse_tier(item["memory_type"])
    if tier is None:
        return None, f"unknown memory_type {item['memory_type']!r}"
    related = item.get("related_entities", [])
    if not isinstance(related, list) or not all(isinstance(r, str) for r in related):
        return None, "related_entities must be a list of strings"
    overrides, valid_at = item.get("overrides_entity"), item.get("valid_at")
    if not isinstance(overrides, str | None) or not isinstance(valid_at, str | None):
        return None, "overrides_entity and valid_at must be strings or null"
    return FactDraft(
        entity_name=item["entity_name"].strip(),
        fact_content=item["fact_content"].strip(),
        memory_type=tier,
        overrides_entity=overrides.strip() or None if overrides else None,
        related_entities=tuple(r.strip() for r in related if r.strip()),
        valid_date=valid_at.strip() or None if valid_at else None,
        source_ids=source_ids,
    ), ""
