"""Identity and scope (issue 29, items 6 and 7): what the harness was handed is checked.

Predictions are bound to their question, a foreign `run.json` identity vouches for
nothing, empty questions and suites and the bucket root are refused, and a poisoned
cache row or a damaged rag store is set aside and rebuilt instead of failing every rerun.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from arms.rag import RagArm, RagConfig
from bench.errors import ConfigError, DatasetError
from bench.files import write_json_atomic
from bench.records import record_path
from bench.run.directory import RunDirectory, identity_shaped
from bench.run.phases import StoredArm, context_json, prediction_path
from bench.types import Context, Question
from bench.untrusted import UntrustedJSONError
from tests.arms.test_arms_raw_rag import HashEmbedder, conversation, services
from tests.providers.test_provider_cache import MESSAGES, _cfg, server  # noqa: F401 - the fixture

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests/golden/records/identity_fingerprint_question_record.json"
QUESTION = Question("smoke-1:0", "smoke-1", "When did Alice start pottery classes?", 2, "7 May")
IDENT = "0123456789abcdef"


# ---- predictions are bound to their question -------------------------------------------


def _questions() -> list[Question]:
    return [Question(f"c1:{i}", "c1", f"question {i}?", 1, "x") for i in (1, 2)]


def _predict(run_dir: Path, question: Question) -> Path:
    path = prediction_path(run_dir, question)
    entry = {"identity": IDENT, "context": context_json(Context(f"ctx {question.question_id}"), 1)}
    write_json_atomic(path, {"question_id": question.question_id, "arms": {"raw": entry}})
    return path


def test_a_prediction_answers_its_own_question(tmp_path: Path) -> None:
    q1, q2 = _questions()
    _predict(tmp_path, q1), _predict(tmp_path, q2)
    stored = StoredArm("raw", tmp_path, IDENT)
    assert stored.retrieve(q1).text == "ctx c1:1" and stored.retrieve(q2).text == "ctx c1:2"


def test_swapped_prediction_files_are_refused_in_one_line(tmp_path: Path) -> None:
    q1, q2 = _questions()
    one, two = _predict(tmp_path, q1), _predict(tmp_path, q2)
    swap = one.with_suffix(".swap")
    one.rename(swap), two.rename(one), swap.rename(two)  # each under the other's name
    with pytest.raises(UntrustedJSONError) as refused:
        StoredArm("raw", tmp_path, IDENT).retrieve(q1)
    message = str(refused.value)
    assert "prediction for question 'c1:2', not 'c1:1'" in message and str(one) in message
    assert "\n" not in message and "re-run phase=predict" in message


def test_a_prediction_without_its_identity_vouches_for_nothing(tmp_path: Path) -> None:
    q1 = _questions()[0]
    entry = {"context": context_json(Context("ctx"), 1)}
    payload = {"question_id": "c1:1", "arms": {"raw": entry}}
    write_json_atomic(prediction_path(tmp_path, q1), payload)
    with pytest.raises(ConfigError, match="predicted under another predict identity"):
        StoredArm("raw", tmp_path, IDENT)


@pytest.mark.parametrize(
    ("arms", "what"),
    [
        ([], "arms is not an object"),
        ({"raw": "x"}, "arms is not an object of per-arm objects"),
        ({"raw": {"identity": 5}}, "arms.raw.identity is not a string"),
        ({"raw": {"identity": IDENT, "context": "x"}}, "arms.raw.context is malformed"),
        ({"raw": {"identity": IDENT, "context": {"text": "t", "items": [{"score": "high"}]}}},
         "arms.raw.context is malformed"),
    ],
)  # fmt: skip
def test_wrong_types_in_a_prediction_are_one_line(tmp_path: Path, arms: Any, what: str) -> None:
    q1 = _questions()[0]
    write_json_atomic(prediction_path(tmp_path, q1), {"question_id": q1.question_id, "arms": arms})
    with pytest.raises(UntrustedJSONError, match=what):
        StoredArm("raw", tmp_path, IDENT).retrieve(q1)


# ---- a foreign run.json identity vouches for nothing -----------------------------------


def _golden_identity() -> dict[str, Any]:
    full = GOLDEN.with_name("identity_full_question_record.json")
    return copy.deepcopy(json.loads(full.read_text())["provenance"]["identity"])


def test_every_identity_the_project_wrote_has_its_shape() -> None:
    assert identity_shaped(_golden_identity())
    for run_json in sorted((ROOT / "results").glob("*/run.json")):
        assert identity_shaped(json.loads(run_json.read_text())["identity"]), run_json


@pytest.mark.parametrize(
    "foreign",
    [{"foreign": True}, {"arm_options": {}}, [1, 2], "x",
     {**_golden_identity(), "dataset_sha256": 5}, {**_golden_identity(), "arm_options": []}],
    ids=["other-keys", "arm-options-only", "a-list", "a-string", "int-hash", "arm-options-list"],
)  # fmt: skip
def test_a_foreign_identity_leaves_every_record_checked(tmp_path: Path, foreign: Any) -> None:
    (tmp_path / "run.json").write_text(json.dumps({"schema_version": 1, "identity": foreign}))
    path = record_path(tmp_path, QUESTION.file_stem)
    path.parent.mkdir(parents=True)
    shutil.copyfile(GOLDEN, path)
    changed = _golden_identity()
    changed["embedder"] = "openai:text-embedding-3-small:1536"
    rundir = RunDirectory(tmp_path)
    rundir.check_identity(changed)  # the foreign run.json cannot refuse it (or vouch)
    with pytest.raises(ConfigError) as refused:
        rundir.load_record(QUESTION)
    assert "run.json is missing, unreadable or foreign" in str(refused.value)
    assert "made with different embedder;" in str(refused.value)


# ---- empty questions and suites, the bucket root ----------------------------------------


@pytest.mark.parametrize("text", ["", "   ", "\n"])
def test_an_empty_question_text_is_refused(tmp_path: Path, text: str) -> None:
    from bench.loaders.locomo import load_locomo

    data = json.loads((ROOT / "datasets/fixtures/smoke_locomo.json").read_text())
    data[0]["qa"][1]["question"] = text
    (tmp_path / "d.json").write_text(json.dumps(data))
    with pytest.raises(DatasetError, match=r"qa|empty question text") as refused:
        load_locomo(tmp_path / "d.json")
    assert "empty question text" in str(refused.value) and "\n" not in str(refused.value)


def test_a_dataset_without_questions_is_refused(tmp_path: Path) -> None:
    from bench.loaders.locomo import load_locomo

    data = json.loads((ROOT / "datasets/fixtures/smoke_locomo.json").read_text())
    for item in data:
        item["qa"] = []
    (tmp_path / "d.json").write_text(json.dumps(data))
    with pytest.raises(DatasetError, match="no questions in the file"):
        load_locomo(tmp_path / "d.json")


def test_a_suite_without_queries_is_refused() -> None:
    from bench.suite.validate import parse_suite

    suite = {
        "name": "s",
        "kind": "k",
        "version": 1,
        "memories": [{"id": "m1", "text": "a memory"}],
        "queries": [],
    }
    with pytest.raises(DatasetError) as refused:
        parse_suite(suite, where="s.json")
    message = str(refused.value)
    assert "$.queries is empty" in message and "\n" not in message


def test_the_bucket_root_is_refused_by_summarise(capsys: pytest.CaptureFixture[str]) -> None:
    from bench.summarise.cli import main

    assert main(["s3://some-bucket"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: out=s3://some-bucket: the bucket root holds other runs")
    assert "\n" not in err


# ---- a poisoned cache row is set aside, a damaged rag store rebuilt ---------------------


def _poison(db: Path, kind: str, value: bytes) -> int:
    with sqlite3.connect(db) as conn:
        changed = conn.execute("UPDATE responses SET value = ? WHERE kind = ?", (value, kind))
        return changed.rowcount


def _quarantined(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [row[0] for row in conn.execute("SELECT why FROM quarantined ORDER BY why")]


@pytest.mark.parametrize(
    ("value", "why"),
    [
        (b"\xff\xfe not json", "not UTF-8"),
        (b"[" * 100_000 + b"]" * 100_000, "nested deeper"),
        (b'"a string"', "top level is a string"),
        (b'{"text": 5, "model": "m", "usage": {}, "finish_reason": "stop", "tool_calls": []}',
         "not a chat reply: text is int"),
        (b'{"text": "t", "model": "m", "usage": {"prompt_tokens": "9"}, "finish_reason": "stop",'
         b' "tool_calls": []}', "usage is not a set of token counts"),
    ],
)  # fmt: skip
def test_a_poisoned_chat_row_is_moved_aside_and_asked_again(
    server: Any,  # noqa: F811 - the fixture
    tmp_path: Path,
    value: bytes,
    why: str,
) -> None:
    from bench.providers.factory import build_providers

    first = build_providers(_cfg(server), tmp_path)
    reply = first.answerer.complete(MESSAGES)
    first.close()
    db = tmp_path / "cache" / "responses.sqlite"
    assert _poison(db, "chat", value) == 1
    server.clear_log()
    second = build_providers(_cfg(server), tmp_path)
    again = second.answerer.complete(MESSAGES)
    third = second.answerer.complete(MESSAGES)
    second.close()
    assert not again.cached and again.text == reply.text and len(server.requests) == 1
    assert third.cached  # the fresh reply was stored in the poisoned row's place
    [reason] = _quarantined(db)
    assert why in reason


@pytest.mark.parametrize(
    "value",
    [b"\x00" * 12, np.full(256, np.nan, dtype=np.float32).tobytes(), b"[1, 2]"],
    ids=["short", "nan", "json"],
)
def test_a_poisoned_embedding_row_is_moved_aside(
    server: Any,  # noqa: F811 - the fixture
    tmp_path: Path,
    value: bytes,
) -> None:
    from bench.providers.factory import build_providers

    first = build_providers(_cfg(server), tmp_path)
    fresh = first.embedder.embed(["a turn"])
    first.close()
    db = tmp_path / "cache" / "responses.sqlite"
    assert _poison(db, "embedding", value) == 1
    second = build_providers(_cfg(server), tmp_path)
    again = second.embedder.embed(["a turn"])
    second.close()
    assert np.array_equal(again, fresh)
    assert _quarantined(db) == ["not a 256-dimensional float32 embedding"]


def _damage_truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:100])


def _damage_foreign(path: Path) -> None:
    np.savez(path.open("wb"), chunk_ids=np.arange(2), vectors=np.ones((2, 64), np.float32))


def _damage_nan(path: Path) -> None:
    with np.load(path) as saved:
        ids, vectors = saved["chunk_ids"], saved["vectors"].copy()
    vectors[0, 0] = np.nan
    np.savez(path.open("wb"), chunk_ids=ids, vectors=vectors)


def _damage_symlink(path: Path) -> None:
    path.unlink()
    os.symlink("/dev/zero", path)


@pytest.mark.parametrize(
    "damage", [_damage_truncate, _damage_foreign, _damage_nan, _damage_symlink]
)
def test_a_damaged_rag_store_is_rebuilt(tmp_path: Path, damage: Any) -> None:
    conv, embedder = conversation(), HashEmbedder()
    question = Question("c1:1", "c1", "topic2x1?", 1, "x")
    built = RagArm("rag", RagConfig(top_k=3), services(tmp_path, embedder))
    assert not built.ingest(conv)["reused_store"]
    expected = built.retrieve(question)
    damage(tmp_path / "c1" / "vectors.npz")
    healed = RagArm("rag", RagConfig(top_k=3), services(tmp_path, embedder))
    assert not healed.ingest(conv)["reused_store"]  # rebuilt, not trusted, not an error
    assert healed.retrieve(question) == expected
    again = RagArm("rag", RagConfig(top_k=3), services(tmp_path, embedder))
    assert again.ingest(conv)["reused_store"]  # and the rebuilt store is reused after
