"""The LLM extractor: one `update_memory` call per exchange (methodology §4 step 3).

The model sees the session date, facts already known about the exchange (so it can
name what a new fact overrides) and the exchange; it must answer with one tool call
whose items carry every field of a record, or (schema mode) with the same arguments as
JSON constrained by a JSON Schema. Anything malformed — no tool call, bad JSON, an item
missing a field or with an unknown memory_type — becomes an `ExtractionError` holding
the raw text; well-formed items of the same call are kept.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from arms.neuromorphic.cut_reply import closed_items
from arms.neuromorphic.dry_extract import is_dry_run, rule_arguments
from arms.neuromorphic.exchange import Exchange
from arms.neuromorphic.extraction import Extraction, ExtractionError
from arms.neuromorphic.records import Fact, FactDraft, parse_tier
from bench.end_tokens import strip_end_tokens
from bench.errors import ConfigError, ProviderError, raise_if_permanent
from bench.providers.base import CallOptions, ChatProvider, JsonSchema, supports_json_schema
from bench.types import Usage
from bench.untrusted import UntrustedJSONError, parse_json

log = logging.getLogger("arms.neuromorphic")

TOOL_NAME = "update_memory"
MAX_ITEMS = 4
"""Facts one exchange may yield: a small model cannot repeat one fact without end."""
NAME_MAX_CHARS = 60
"""Bound on an entity name (`Person / topic`)."""
FACT_MAX_CHARS = 200
"""Bound on a fact's sentence."""
MAX_RELATED = 3
"""Related entity names one fact may list."""
DATE_MAX_CHARS = 24
"""Bound on `valid_at` (a date such as `17 March 2031`)."""
PROMPT_VERSION = (
    f"neuromorphic-extract-v3-b{MAX_ITEMS}.{MAX_RELATED}.{NAME_MAX_CHARS}.{FACT_MAX_CHARS}"
    f".{DATE_MAX_CHARS}"
)
"""The prompt's version with the schema's bounds in it: other bounds, other requests."""
_NAME = {"type": "string", "maxLength": NAME_MAX_CHARS}
_ITEM = {
    "type": "object",
    "properties": {
        "entity_name": _NAME,
        "fact_content": {"type": "string", "maxLength": FACT_MAX_CHARS},
        "memory_type": {
            "type": "string",
            "enum": ["CoreAnchor", "ActiveContext", "EphemeralState"],
        },
        "overrides_entity": {"type": ["string", "null"], "maxLength": NAME_MAX_CHARS},
        "related_entities": {"type": "array", "items": _NAME, "maxItems": MAX_RELATED},
        "valid_at": {"type": ["string", "null"], "maxLength": DATE_MAX_CHARS},
    },
    "required": ["entity_name", "fact_content", "memory_type", "related_entities"],
}
_ITEMS = {"type": "array", "items": _ITEM, "maxItems": MAX_ITEMS}
UPDATE_MEMORY_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": TOOL_NAME,
        "description": "Store the facts of the new exchange in long-term memory.",
        "parameters": {
            "type": "object",
            "properties": {"items": _ITEMS},
            "required": ["items"],
        },
    },
}
SYSTEM_PROMPT = f"""You maintain the long-term memory of a conversation. Read the new exchange \
and call the tool update_memory exactly once with every fact worth remembering (an empty \
list if there is none; at most {MAX_ITEMS} items, each fact once). For each item:
- entity_name: what the fact is about, prefixed with the person it belongs to \
(e.g. "Ilse / bicycle"). Reuse the exact entity_name of a known fact when the new \
fact updates it.
- fact_content: one self-contained sentence that names the person. Resolve relative \
dates ("yesterday", "last year", "next month") against the session date and write the \
absolute date into the sentence (e.g. "Ilse sold her old bicycle on 17 March 2031.").
- memory_type: CoreAnchor (identity, lasting traits, relationships), ActiveContext \
(events, plans, ongoing activities) or EphemeralState (passing moods, momentary states).
- overrides_entity: the entity_name of a known fact this one makes out of date, if any.
- related_entities: up to {MAX_RELATED} entity names of other facts this one is connected to.
- valid_at: the date the fact became true when the exchange says so (e.g. "17 March 2031").
Images appear as [shares a photo: caption]; treat the caption as what was shown."""
SCHEMA_SYSTEM_PROMPT = SYSTEM_PROMPT.replace(
    "call the tool update_memory exactly once with every fact worth remembering (an empty \
list if there is none",
    'reply with one JSON object {"items": [...]} holding every fact worth remembering (an \
empty list if there is none',
)
SCHEMA_PROMPT_VERSION = f"{PROMPT_VERSION}-json_schema"
EXTRACT_MODES = ("tools", "json_schema")
CAP_BASE_TOKENS = 256
"""Room for the JSON keys of a few items, on top of the restated facts."""


_WARNED: set[str] = set()
"""Models the "ignored tools" warning was logged for in this process (the run)."""
_WARNED_LOCK = threading.Lock()


def warn_once(model: str) -> None:
    """Log that `model` ignored tools, once per run: every arm and lane has its extractor."""
    with _WARNED_LOCK:
        if model in _WARNED:
            return
        _WARNED.add(model)
    log.warning(
        "extractor %s ignored tools (free text, no tool call): asking with a JSON Schema for "
        "the rest of this run",
        model,
    )


class LLMExtractor:
    """Fact extraction by a chat model: an `update_memory` tool call or schema-bound JSON.

    Modes (`provider.extractor.extract_mode`):

    - `tools`: one `update_memory` tool call per exchange. A reply with free text and no
      tool call, although tools were sent, means the server ignored `tools` (llama.cpp
      without a tool-capable template does so silently). When the endpoint honours JSON
      Schemas (`json_schema: true`), that exchange is asked again as schema-bound JSON
      and so is every later one in this run (logged once; counted per exchange in the
      extraction health as `via_json_schema` and `tools_ignored`).
    - `json_schema`: every exchange as JSON constrained by `extraction_schema()`.

    Each call asks for at most `completion_cap(exchange)` tokens: what a valid answer to
    that exchange needs, so a model that rambles stops early instead of at the endpoint's
    ceiling.
    """

    def __init__(self, provider: ChatProvider, mode: str = "tools") -> None:
        if mode not in EXTRACT_MODES:
            known = ", ".join(EXTRACT_MODES)
            raise ConfigError(
                f"provider.extractor.extract_mode={mode}: unknown; use one of {known}"
            )
        if mode == "json_schema" and not supports_json_schema(provider):
            raise ConfigError(
                "provider.extractor.extract_mode=json_schema needs a server that honours JSON "
                "Schemas: set provider.extractor.json_schema=true (llama.cpp, vLLM, OpenAI)"
            )
        self.provider = provider
        self.model = provider.model
        self.mode = mode
        self.version = PROMPT_VERSION if mode == "tools" else f"{PROMPT_VERSION}+json_schema"
        self._use_schema = mode == "json_schema"
        self._lock = threading.Lock()

    def extract(self, exchange: Exchange, known: Sequence[Fact]) -> Extraction:
        """Call the model once (twice when it ignored tools) and parse the reply.

        A call that fails (after the provider's retries) is one failed exchange, recorded
        as a `call_failed` error, never a failed conversation.
        """
        if self._use_schema:
            return self._by_schema(exchange, known)
        first = self._by_tools(exchange, known)
        if not first.tools_ignored or not supports_json_schema(self.provider):
            return first
        with self._lock:
            if not self._use_schema:
                warn_once(self.model)
            self._use_schema = True
        second = self._by_schema(exchange, known)
        usage = Usage(
            first.usage.prompt_tokens + second.usage.prompt_tokens,
            first.usage.completion_tokens + second.usage.completion_tokens,
        )
        return replace(second, usage=usage, tools_ignored=True)

    def _by_tools(self, exchange: Exchange, known: Sequence[Fact]) -> Extraction:
        options = CallOptions(max_tokens=completion_cap(exchange))
        try:
            result = self.provider.complete(
                messages(exchange, known),
                tools=[UPDATE_MEMORY_TOOL],
                prompt_version=PROMPT_VERSION,
                options=options,
            )
        except ProviderError as exc:
            raise_if_permanent(exc)  # a rejected key or unknown model: the run stops
            return _failed(exc, "tools")
        if is_dry_run(self.provider):  # counted, never sent: the rules' facts stand in
            call = {"name": TOOL_NAME, "arguments": rule_arguments(exchange)}
            result = replace(result, text="", tool_calls=(call,))
        calls = [c for c in result.tool_calls if c.get("name") == TOOL_NAME]
        if not calls:
            ignored = not result.tool_calls and bool(result.text.strip())
            raw = result.text or json.dumps(list(result.tool_calls))
            error = ExtractionError("no_tool_call", f"the model did not call {TOOL_NAME}", raw)
            return Extraction(
                errors=(error,), usage=result.usage, mode="tools", tools_ignored=ignored
            )
        facts: list[FactDraft] = []
        errors: list[ExtractionError] = []
        for call in calls:
            found, bad = parse_arguments(call.get("arguments"), exchange.dia_ids())
            facts.extend(found)
            errors.extend(bad)
        return Extraction(tuple(facts), tuple(errors), result.usage, mode="tools")

    def _by_schema(self, exchange: Exchange, known: Sequence[Fact]) -> Extraction:
        options = CallOptions(max_tokens=completion_cap(exchange), json_schema=extraction_schema())
        try:
            result = self.provider.complete(
                messages(exchange, known, SCHEMA_SYSTEM_PROMPT),
                prompt_version=SCHEMA_PROMPT_VERSION,
                options=options,
            )
        except ProviderError as exc:
            raise_if_permanent(exc)  # a rejected key or unknown model: the run stops
            return _failed(exc, "json_schema")
        if is_dry_run(self.provider):  # counted, never sent: the rules' facts stand in
            result = replace(result, text=json.dumps(rule_arguments(exchange)))
        text = strip_end_tokens(result.text)
        found, bad = parse_arguments(text, exchange.dia_ids())
        if result.finish_reason == "length" and bad:
            found, bad = _cut_reply(text, exchange, options.max_tokens)
        return Extraction(tuple(found), tuple(bad), result.usage, mode="json_schema")


def _cut_reply(
    text: str, exchange: Exchange, cap: int | None
) -> tuple[list[FactDraft], list[ExtractionError]]:
    """The items that closed before the cap, plus one `truncated` error that says so."""
    found, bad = parse_arguments({"items": closed_items(text)}, exchange.dia_ids())
    kept = f"; kept the {len(found)} complete items before the cut" if found else ""
    return found, [ExtractionError("truncated", f"reply hit the {cap}-token cap{kept}", text), *bad]


def _failed(exc: ProviderError, mode: str) -> Extraction:
    return Extraction(errors=(ExtractionError("call_failed", str(exc), ""),), mode=mode)


def completion_cap(exchange: Exchange) -> int:
    """Tokens a valid answer to `exchange` needs: `CAP_BASE_TOKENS + chars(exchange)`.

    A valid answer restates the exchange's facts as self-contained sentences, each item
    repeating names in `entity_name` and `related_entities`: up to about four times the
    exchange's own tokens (~4 characters a token, so one token per character of the
    exchange), plus the JSON keys of the items (the base). The endpoint's `max_tokens`
    stays the ceiling.
    """
    return CAP_BASE_TOKENS + len(exchange.text())


def extraction_schema() -> JsonSchema:
    """`{"items": [...]}` with every item field required (nullable ones may be null).

    Bounded so a small model can finish it: at most `MAX_ITEMS` items, `MAX_RELATED`
    related names, strings of at most `NAME_MAX_CHARS` / `FACT_MAX_CHARS` /
    `DATE_MAX_CHARS` characters (`maxItems`, `maxLength`; llama.cpp turns them into its
    grammar). `completion_cap` still bounds the reply's tokens.
    """
    item = {**_ITEM, "required": list(_ITEM["properties"]), "additionalProperties": False}
    schema = {
        "type": "object",
        "properties": {"items": {**_ITEMS, "items": item}},
        "required": ["items"],
        "additionalProperties": False,
    }
    return JsonSchema(TOOL_NAME, schema)


def messages(
    exchange: Exchange, known: Sequence[Fact], system: str | None = None
) -> list[dict[str, Any]]:
    """The chat messages for one exchange (`system` defaults to the tool-call prompt)."""
    known_lines = "\n".join(f"- [{f.entity_name}] {f.fact_content}" for f in known) or "(none)"
    user = (
        f"Session date: {exchange.date_time}\n\nKnown facts:\n{known_lines}\n\n"
        f"New exchange:\n{exchange.text()}"
    )
    return [
        {"role": "system", "content": system or SYSTEM_PROMPT},
        {"role": "user", "content": user},
    ]


def parse_arguments(
    arguments: Any, source_ids: tuple[str, ...]
) -> tuple[list[FactDraft], list[ExtractionError]]:
    """Drafts from one tool call's JSON arguments, plus an error per malformed part."""
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    try:  # bench.untrusted: bounded nesting and numbers, like every reply from a service
        data = parse_json(raw, "tool call arguments") if isinstance(arguments, str) else arguments
    except UntrustedJSONError as exc:
        return [], [ExtractionError("bad_json", f"arguments are not JSON: {exc.what}", raw)]
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
