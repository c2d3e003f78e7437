"""The per-question record: schema, golden file of every version, atomic writes."""

from __future__ import annotations

import json
import math
import stat
from pathlib import Path

import jsonschema
import pytest

from bench.files import read_file_bytes, write_json_atomic
from bench.records import SCHEMA_VERSION, ArmResult, QuestionRecord, read_record, write_record

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests/golden/records"
SCHEMA = json.loads((ROOT / "bench/schema/question_record.schema.json").read_text())


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("v*_question_record.json")), ids=str)
def test_every_golden_version_still_loads_and_validates(path: Path) -> None:
    data = json.loads(path.read_text())
    jsonschema.validate(data, SCHEMA)
    record = read_record(path)
    assert record.schema_version == data["schema_version"]
    assert record.to_json() == data  # nothing lost or invented on the way through


def test_current_version_has_a_golden_file() -> None:
    assert (GOLDEN / f"v{SCHEMA_VERSION}_question_record.json").is_file()


def test_unknown_schema_version_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "q.json"
    data = json.loads((GOLDEN / "v1_question_record.json").read_text())
    path.write_text(json.dumps({**data, "schema_version": 99}))
    with pytest.raises(ValueError, match=r"q\.json: schema_version 99"):
        read_record(path)


def test_error_result_is_valid_and_is_not_complete(tmp_path: Path) -> None:
    record = QuestionRecord(
        "c:0", "locomo", "c", 4, "q?", "a", [], {"rag": ArmResult.failed("Timeout\ntrace")}
    )
    assert not record.is_complete(["rag"])
    assert record.arms["rag"].error == "Timeout"  # one line
    path = write_record(tmp_path, "c_0", record)
    jsonschema.validate(json.loads(path.read_text()), SCHEMA)


def test_ok_result_without_an_answer_fails_the_schema() -> None:
    data = json.loads((GOLDEN / "v1_question_record.json").read_text())
    data["arms"]["raw"]["answer"] = None
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, SCHEMA)


def test_atomic_write_leaves_no_temp_file_and_is_readable(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "x.json"
    write_json_atomic(path, {"a": 1})
    assert json.loads(path.read_text()) == {"a": 1}
    assert [p.name for p in path.parent.iterdir()] == ["x.json"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_nan_is_refused_and_the_old_file_survives(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    write_json_atomic(path, {"f1": 0.5})
    with pytest.raises(ValueError):
        write_json_atomic(path, {"f1": math.nan})
    assert json.loads(path.read_text()) == {"f1": 0.5}
    assert [p.name for p in tmp_path.iterdir()] == ["x.json"]


def test_shipped_schema_is_generated_from_the_dataclasses() -> None:
    """The schema file equals what the dataclasses generate, so no field can drift."""
    from bench.verify.record_schema import build_schema

    assert build_schema() == SCHEMA, "run `python -m bench.verify.record_schema --write`"


def test_schema_forbids_unknown_fields() -> None:
    data = json.loads((GOLDEN / "v1_question_record.json").read_text())
    data["arms"]["raw"]["invented"] = 1
    with pytest.raises(jsonschema.ValidationError, match="invented"):
        jsonschema.validate(data, SCHEMA)


def test_live_write_path_round_trips_and_is_absent_for_in_process_arms(tmp_path: Path) -> None:
    live = ArmResult(status="ok", answer="x", correct=True, write_path="remember")
    record = QuestionRecord("c:0", "locomo", "c", 4, "q?", "a", [], {"http": live})
    data = json.loads(write_record(tmp_path, "c_0", record).read_text())
    jsonschema.validate(data, SCHEMA)
    assert data["arms"]["http"]["write_path"] == "remember"
    path = write_record(tmp_path, "c_0", record)
    assert read_record(path).arms["http"].write_path == "remember"
    plain = QuestionRecord("c:0", "locomo", "c", 4, "q?", "a", [], {"rag": ArmResult("ok", "x")})
    assert "write_path" not in plain.to_json()["arms"]["rag"]


def test_from_json_drops_a_newer_writers_keys_and_fills_defaults() -> None:
    """Unknown keys (record and result) are dropped; omitted fields take fresh defaults."""
    data = json.loads((GOLDEN / f"v{SCHEMA_VERSION}_question_record.json").read_text())
    expected = QuestionRecord.from_json(json.loads(json.dumps(data)))
    data["added_later"] = {"x": 1}
    for result in data["arms"].values():
        result["added_later"] = 1
        result.pop("usage", None)
        result.pop("retrieved_ids", None)
    read = QuestionRecord.from_json(data)
    for result in expected.arms.values():
        result.usage = None
        result.retrieved_ids = []
    assert read == expected
    assert not hasattr(read, "added_later")
    assert all(not hasattr(r, "added_later") for r in read.arms.values())
    first, second = list(read.arms.values())[:2]
    assert first.retrieved_ids is not second.retrieved_ids


def test_read_file_bytes_returns_whole_files_of_any_size(tmp_path: Path) -> None:
    """Empty, small and multi-chunk files come back byte for byte."""
    for size in (0, 1, 4_096, 200_003):
        path = tmp_path / f"f{size}.json"
        body = bytes(i % 251 for i in range(size))
        path.write_bytes(body)
        assert read_file_bytes(str(path)) == body


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs Linux /proc")
def test_read_file_bytes_reads_on_when_the_size_is_not_what_fstat_said() -> None:
    """A /proc file reports size 0 but has content: the reader must go on to its end."""
    expected = Path("/proc/self/cmdline").read_bytes()
    assert expected
    assert read_file_bytes("/proc/self/cmdline") == expected


def test_read_file_bytes_of_a_directory_is_an_os_error(tmp_path: Path) -> None:
    """The summariser reports OSError as an unreadable record; a folder must raise one."""
    folder = tmp_path / "q.json"
    folder.mkdir()
    with pytest.raises(OSError):
        read_file_bytes(str(folder))
