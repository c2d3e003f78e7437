"""A chat reply as the response cache stores it, and read back from an untrusted row.

A row is a JSON object: text, model, usage (token counts), finish reason, tool calls and
the original latency. Rows are read from a file anything may have written, so a row that
is not one `reply_row` wrote is named by `row_problem` (and quarantined by the caller).
"""

from __future__ import annotations

from dataclasses import fields

from bench.result_parts import usage_dict
from bench.typed_json import JSONObject, JSONValue
from bench.types import ChatResult, Usage


def reply_row(result: ChatResult) -> JSONObject:
    """The cache row of a reply (`reasoning_tokens` only when non-zero: `usage_dict`)."""
    return {
        "text": result.text,
        "model": result.model,
        "usage": dict(usage_dict(result.usage)),
        "finish_reason": result.finish_reason,
        "tool_calls": list(result.tool_calls),
        "latency_ms": result.latency_ms,
    }


def row_problem(data: JSONObject) -> str | None:
    """What makes a cached row no reply `reply_row` wrote (None when it is one)."""
    kinds = {"text": str, "model": str, "usage": dict, "finish_reason": str, "tool_calls": list}
    wrong = [name for name, kind in kinds.items() if not isinstance(data.get(name), kind)]
    if wrong:
        return f"not a chat reply: {wrong[0]} is {type(data.get(wrong[0])).__name__}"
    usage, calls, names = data["usage"], data["tool_calls"], {f.name for f in fields(Usage)}
    if not isinstance(usage, dict) or set(usage) - names or len(_counts(usage)) != len(usage):
        return "not a chat reply: usage is not a set of token counts"
    ok = isinstance(calls, list) and len(_calls(calls)) == len(calls)
    return None if ok else "not a chat reply: tool_calls are not objects"


def _counts(value: JSONValue) -> dict[str, int]:
    """The token counts of a stored `usage` object (its entries that are ints)."""
    items = value.items() if isinstance(value, dict) else ()
    return {name: n for name, n in items if type(n) is int}


def _calls(value: JSONValue) -> tuple[JSONObject, ...]:
    """The tool calls of a stored reply (its entries that are objects)."""
    items = value if isinstance(value, list) else ()
    return tuple(call for call in items if isinstance(call, dict))


def reply_from_row(data: JSONObject, *, cached: bool, latency_ms: float) -> ChatResult:
    """The reply in a row `row_problem` passed (each field has the type it checks)."""
    text, model, finish = (str(data[name]) for name in ("text", "model", "finish_reason"))
    return ChatResult(
        text=text,
        model=model,
        usage=Usage(**_counts(data["usage"])),
        finish_reason=finish,
        tool_calls=_calls(data["tool_calls"]),
        cached=cached,
        latency_ms=latency_ms,
    )
