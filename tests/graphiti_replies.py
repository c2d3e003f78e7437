"""Deterministic replies that play Graphiti's LLM for tests (a `FaultServer` chat_fn).

The graphiti arm asks for JSON with the schema written into the prompt (Graphiti's
`json_object` mode, which needs no `response_format` support from the proxy), so the
stub reads the schema after `SCHEMA_MARK` and answers with an instance of it:

* entity extraction (`ExtractedEntities`): the speaker of the current message and the
  message itself as a second entity;
* edge extraction (`ExtractedEdges`): one fact per message, speaker -> message,
  `"<speaker> said: <text>"`;
* any other schema (deduplication, summaries, timestamps): the smallest valid instance
  (empty lists, empty strings, zeros, nulls), which keeps every node and edge as new.

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


def graphiti_chat_fn(messages: list[dict[str, Any]]) -> str:
    """Graphiti's reply to one chat request (see the module docstring)."""
    prompt = str(messages[-1].get("content", "")) if messages else ""
    if SCHEMA_MARK not in prompt:
        return "{}"
    schema = json.loads(prompt.split(SCHEMA_MARK, 1)[1].strip())
    title, said = schema.get("title"), speaker_and_text(prompt)
    if title == "ExtractedEntities" and said:
        names = [said[0], said[1][:200]]
        return json.dumps({"extracted_entities": [
            {"name": n, "entity_type_id": 0, "episode_indices": [0]} for n in names]})  # fmt: skip
    if title == "ExtractedEdges" and said:
        edge = {"source_entity_name": said[0], "target_entity_name": said[1][:200],
                "relation_type": "SAID", "fact": f"{said[0]} said: {said[1]}",
                "valid_at": None, "invalid_at": None, "episode_indices": [0]}  # fmt: skip
        return json.dumps({"edges": [edge]})
    return json.dumps(smallest(schema, schema.get("$defs", {})))
