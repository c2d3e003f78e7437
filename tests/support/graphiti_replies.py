"""Deterministic replies that play Graphiti's LLM for tests (a `FaultServer` chat_fn).

The graphiti arm asks for JSON with the schema written into the prompt (Graphiti's
`json_object` mode, which needs no `response_format` support from the proxy), so the
stub reads the schema after `SCHEMA_MARK` and answers with an instance of it:

* entity extraction (`ExtractedEntities`): the speaker of the current message and the
  message itself as a second entity;
* edge extraction (`ExtractedEdges`): one fact per message, speaker -> message,
  `"<speaker> said: <text>"`;
* entity deduplication (`NodeResolutions`): an entity is a duplicate of an existing
  one with the same name, new otherwise;
* any other schema (fact deduplication, summaries, timestamps): the smallest valid
  instance (empty lists, empty strings, zeros, nulls), which keeps every fact as new.

A reply depends only on the prompt, so the run's response cache serves repeats.
"""

from __future__ import annotations

import json
import re
from typing import Any

SCHEMA_MARK = "Respond with a JSON object in the following format:\n\n"
"""What Graphiti's json_object mode appends before the schema of the reply."""
CURRENT = re.compile(r"<CURRENT[ _]MESSAGE>\n(.*?)\n</CURRENT[ _]MESSAGE>", re.S)
"""The message being ingested (entity and edge prompts)."""


def smallest(schema: dict[str, Any], defs: dict[str, Any]) -> Any:
    """The smallest instance of a JSON schema: required fields only, empty containers."""
    if "$ref" in schema:
        return smallest(defs[str(schema["$ref"]).rsplit("/", 1)[-1]], defs)
    if "anyOf" in schema:
        kinds = [s for s in schema["anyOf"] if s.get("type") != "null"]
        return smallest(kinds[0], defs) if len(kinds) == len(schema["anyOf"]) else None
    if schema.get("type") == "object":
        required = set(schema.get("required", []))
        props = schema.get("properties", {})
        return {k: smallest(v, defs) for k, v in props.items() if k in required}
    empty = {"array": [], "string": "", "integer": 0, "number": 0, "boolean": False}
    return empty.get(str(schema.get("type")))


def speaker_and_text(prompt: str) -> tuple[str, str] | None:
    """`(speaker, text)` of the current `Speaker: text` message, None without one."""
    found = CURRENT.search(prompt)
    if found is None or ": " not in found.group(1):
        return None
    speaker, text = found.group(1).strip().split(": ", 1)
    return speaker.strip(), text.strip()


def tagged_list(prompt: str, tag: str) -> list[dict[str, Any]]:
    """The JSON list between `<tag>` and `</tag>` in a prompt ([] when absent)."""
    found = re.search(f"<{tag}>\n(.*?)\n</{tag}>", prompt, re.S)
    listed = json.loads(found.group(1)) if found else []
    return [item for item in listed if isinstance(item, dict)]


def resolutions(prompt: str) -> dict[str, Any]:
    """Each new entity resolved to the existing one of the same name, else to -1."""
    existing = {
        str(e.get("name")): e.get("candidate_id") for e in tagged_list(prompt, "EXISTING ENTITIES")
    }
    new = tagged_list(prompt, "ENTITIES")
    return {
        "entity_resolutions": [
            {
                "id": e.get("id", i),
                "name": e.get("name", ""),
                "duplicate_candidate_id": existing.get(str(e.get("name")), -1),
            }
            for i, e in enumerate(new)
        ]
    }


def graphiti_chat_fn(messages: list[dict[str, Any]]) -> str:
    """Graphiti's reply to one chat request (see the module docstring)."""
    prompt = str(messages[-1].get("content", "")) if messages else ""
    if SCHEMA_MARK not in prompt:
        return "{}"
    schema = json.loads(prompt.split(SCHEMA_MARK, 1)[1].strip())
    title, said = schema.get("title"), speaker_and_text(prompt)
    if title == "ExtractedEntities" and said:
        names = [said[0], said[1][:200]]
        return json.dumps(
            {
                "extracted_entities": [
                    {"name": n, "entity_type_id": 0, "episode_indices": [0]} for n in names
                ]
            }
        )
    if title == "ExtractedEdges" and said:
        edge = {
            "source_entity_name": said[0],
            "target_entity_name": said[1][:200],
            "relation_type": "SAID",
            "fact": f"{said[0]} said: {said[1]}",
            "valid_at": None,
            "invalid_at": None,
            "episode_indices": [0],
        }
        return json.dumps({"edges": [edge]})
    if title == "NodeResolutions":
        return json.dumps(resolutions(prompt))
    return json.dumps(smallest(schema, schema.get("$defs", {})))
