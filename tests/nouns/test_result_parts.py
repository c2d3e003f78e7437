"""A result's usage and health are typed in memory and written as the plain dicts of old.

Every form the harness writes comes back from a record file and is written again byte
for byte; an object it would never write is refused in one line, not silently changed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from bench.records import ArmResult, QuestionRecord, read_record, write_record
from bench.result_parts import Health, QueryHealth
from bench.types import Usage
from bench.untrusted import UntrustedJSONError

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "bench/schema/question_record.schema.json").read_text()
)
PARTS: list[tuple[str, Any, dict[str, int]]] = [
    ("usage", Usage(12, 3), {"prompt_tokens": 12, "completion_tokens": 3}),
    ("usage", Usage(0, 0), {"prompt_tokens": 0, "completion_tokens": 0}),
    ("usage", Usage(5, 9, 4), {"prompt_tokens": 5, "completion_tokens": 9, "reasoning_tokens": 4}),
    ("extraction", Health(18, 0, 23), {"exchanges": 18, "failed": 0, "facts": 23}),
    (
        "extraction",
        Health(4, 1, 6, via_tools=3, duplicate=2),
        {
            "exchanges": 4,
            "failed": 1,
            "facts": 6,
            "via_tools": 3,
            "via_json_schema": 0,
            "tools_ignored": 0,
            "duplicate": 2,
        },
    ),
    ("retrieval", QueryHealth(items=0), {"items": 0}),
    ("retrieval", QueryHealth(items=7, requested_k=10), {"items": 7, "requested_k": 10}),
    ("retrieval", QueryHealth(empty=1, requested_k=5), {"items": 0, "empty": 1, "requested_k": 5}),
    ("retrieval", QueryHealth(failed=1, timed_out=0), {"failed": 1, "timed_out": 0}),
    ("retrieval", QueryHealth(failed=1, timed_out=1), {"failed": 1, "timed_out": 1}),
]
"""(field, typed value, the exact object its record holds)."""


def _record(result: ArmResult) -> QuestionRecord:
    return QuestionRecord("c:0", "locomo", "c", 1, "q?", "a", [], {"rag": result})


@pytest.mark.parametrize(("name", "typed", "plain"), PARTS)
def test_each_written_form_reads_back_and_writes_the_same_bytes(
    tmp_path: Path, name: str, typed: Any, plain: dict[str, int]
) -> None:
    record = _record(ArmResult("ok", "x", True, context_tokens=1, **{name: typed}))
    path = write_record(tmp_path, "c_0", record)
    text = path.read_text()
    written = json.loads(text)["arms"]["rag"]
    assert list(written[name].items()) == list(plain.items())  # keys, values and order
    jsonschema.validate(json.loads(text), SCHEMA)
    read = read_record(path)
    assert getattr(read.arms["rag"], name) == typed
    assert write_record(tmp_path, "c_0", read).read_text() == text


def test_unset_parts_are_an_empty_usage_and_no_health_keys() -> None:
    written = _record(ArmResult.failed("boom")).to_json()["arms"]["rag"]
    assert written["usage"] == {}
    assert "extraction" not in written and "retrieval" not in written


@pytest.mark.parametrize(
    ("name", "hostile"),
    [
        ("usage", {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}),
        ("usage", {"prompt_tokens": 1, "completion_tokens": 2, "reasoning_tokens": 0}),
        ("extraction", {"exchanges": 3, "failed": 0}),
        ("extraction", {"exchanges": 3, "failed": 0, "facts": 2, "bogus": 1}),
        ("retrieval", {"items": 2, "failed": 1}),
        ("retrieval", {"hits": 2}),
        ("retrieval", {"items": True}),
    ],
)
def test_an_object_the_harness_would_not_write_is_refused_in_one_line(
    tmp_path: Path, name: str, hostile: dict[str, Any]
) -> None:
    path = write_record(tmp_path, "c_0", _record(ArmResult("ok", "x", True)))
    data = json.loads(path.read_text())
    data["arms"]["rag"][name] = hostile
    path.write_text(json.dumps(data))
    with pytest.raises(UntrustedJSONError, match=f"not a question record .*{name} is") as got:
        read_record(path)
    assert "\n" not in str(got.value)
