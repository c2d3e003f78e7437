"""The question record's JSON Schema, generated from the dataclasses in `bench.records`.

The shipped file `bench/schema/question_record.schema.json` is exactly what
`build_schema()` returns (a test checks equality), so the schema can never drift from
the code: add a field to `ArmResult` and the test fails until the file is regenerated
with `python -m bench.verify.record_schema --write`. Every object sets
`additionalProperties: false`; a result's `ok`/`error` status adds the fields it
requires. Standard library only.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import json
import sys
import types
import typing
from pathlib import Path
from typing import Any, Literal

from bench import records
from bench.records import (
    SCHEMA_VERSION,
    ArmResult,
    BudgetResult,
    Imported,
    Judgement,
    QuestionRecord,
    RepeatResult,
)
from bench.result_parts import Health, QueryHealth
from bench.types import Usage

SCHEMA_FILE = Path(__file__).resolve().parents[1] / "schema" / "question_record.schema.json"
_SCALARS = {str: "string", int: "integer", float: "number", bool: "boolean"}
_NON_NEGATIVE = {"context_tokens", "latency_ms", "retrieve_ms"}
_INT_OBJECTS = {Usage, Health, QueryHealth}
_NONE = {type(None)}
"""Typed parts a record writes as objects of integers (`bench.result_parts.plain_parts`);
their None is written `{}` or omitted, never `null`."""
_REFS = {
    ArmResult: "#/$defs/arm_result",
    Judgement: "#/$defs/judgement",
    RepeatResult: "#/$defs/repeat_result",
    Imported: "#/$defs/imported",
    BudgetResult: "#/$defs/budget_result",
}


def build_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a current-version question record."""
    record = _object(QuestionRecord)
    record["properties"]["schema_version"] = {"const": SCHEMA_VERSION}
    record["properties"]["question_id"]["minLength"] = 1
    record["properties"]["arms"]["minProperties"] = 1
    arm = _object(ArmResult)
    arm["allOf"] = [
        {
            "if": {"properties": {"status": {"const": "ok"}}},
            "then": {
                "required": ["answer", "correct", "scores", "context_tokens"],
                "properties": {"answer": {"type": "string"}},
            },
        },
        {
            "if": {"properties": {"status": {"const": "error"}}},
            "then": {"required": ["error"], "properties": {"error": {"type": "string"}}},
        },
    ]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://armbench/schema/question_record.schema.json",
        "title": f"armbench question record (schema_version {SCHEMA_VERSION})",
        "description": "Generated from bench/records.py by `python -m bench.verify.record_schema`.",
        **record,
        "$defs": {
            "arm_result": arm,
            "judgement": _object(Judgement),
            "repeat_result": _object(RepeatResult),
            "imported": _object(Imported),
            "budget_result": _object(BudgetResult),
        },
    }


def _object(cls: type) -> dict[str, Any]:
    """An object schema: one property per dataclass field, described by its docstring."""
    hints = typing.get_type_hints(cls, vars(records))
    docs = field_docstrings(cls)
    props: dict[str, Any] = {}
    required = []
    for f in dataclasses.fields(cls):
        prop = _type(hints[f.name])
        if f.name in _NON_NEGATIVE:
            prop["minimum"] = 0
        if f.name in docs:
            prop["description"] = docs[f.name]
        props[f.name] = prop
        no_default = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        if no_default:
            required.append(f.name)
    return {
        "type": "object",
        "required": required,
        "properties": props,
        "additionalProperties": False,
    }


def _type(hint: Any) -> dict[str, Any]:
    """The schema of one type hint (scalars, optionals, literals, lists and dicts)."""
    if hint in _REFS:
        return {"$ref": _REFS[hint]}
    if hint in _SCALARS:
        return {"type": _SCALARS[hint]}
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint in _INT_OBJECTS or (origin is types.UnionType and set(args) - _NONE <= _INT_OBJECTS):
        return {"type": "object", "additionalProperties": {"type": "integer"}}
    if origin is Literal:
        return {"enum": list(args)}
    if origin in (types.UnionType, typing.Union) and type(None) in args:
        (inner,) = [a for a in args if a is not type(None)]
        schema = _type(inner)
        if "type" in schema:
            return {**schema, "type": [schema["type"], "null"]}
        return {"anyOf": [schema, {"type": "null"}]}
    if origin is list:
        return {"type": "array", "items": _type(args[0])}
    if origin is dict:
        value = args[1]
        return (
            {"type": "object"}
            if value is Any
            else {"type": "object", "additionalProperties": _type(value)}
        )
    raise TypeError(f"no JSON Schema for {hint!r}; extend bench.verify.record_schema._type")


def field_docstrings(cls: type) -> dict[str, str]:
    """The first line of the string literal written under each field of a dataclass."""
    tree = ast.parse(inspect.getsource(cls))
    body = tree.body[0].body  # type: ignore[attr-defined]
    out = {}
    for node, after in zip(body, body[1:], strict=False):
        is_doc = isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and is_doc:
            out[node.target.id] = str(after.value.value).strip().splitlines()[0]
    return out


def render() -> str:
    """The schema file's exact text."""
    return json.dumps(build_schema(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    """`python -m bench.verify.record_schema [--write]`: print (or rewrite) the shipped schema."""
    parser = argparse.ArgumentParser(prog="python -m bench.verify.record_schema")
    parser.add_argument("--write", action="store_true", help=f"rewrite {SCHEMA_FILE.name}")
    args = parser.parse_args(argv)
    if args.write:
        SCHEMA_FILE.write_text(render(), encoding="utf-8")
    else:
        sys.stdout.write(render())
    return 0


if __name__ == "__main__":
    sys.exit(main())
