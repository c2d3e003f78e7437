"""A record's identity fingerprint: what a resume without run.json checks records by.

Records carry `provenance.identity_fingerprint` (one `stable_hash` per identity key);
records written before it carry the full `identity`, and older ones neither. The
golden files under tests/golden/records hold one record of each of the first two
forms, made from the same identity (the committed LoCoMo reference run's).
"""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from bench.errors import ConfigError
from bench.records import record_path
from bench.run.directory import (
    RunDirectory,
    changed_keys,
    fingerprint,
    fingerprint_changes,
    identity,
    saved_fingerprint,
)
from bench.types import Question
from tests.run.test_settings import compose_run

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests/golden/records"
FULL = GOLDEN / "identity_full_question_record.json"
"""A record as written before fingerprints: `provenance.identity` is the whole identity."""
PRINTED = GOLDEN / "identity_fingerprint_question_record.json"
"""The same record as written now: model ids and `provenance.identity_fingerprint`."""
SCHEMA = json.loads((ROOT / "bench/schema/question_record.schema.json").read_text())
QUESTION = Question("smoke-1:0", "smoke-1", "When did Alice start pottery classes?", 2, "7 May")


def _golden_identity() -> dict[str, Any]:
    """The identity both golden records were made under (a fresh copy to edit)."""
    return copy.deepcopy(json.loads(FULL.read_text())["provenance"]["identity"])


def _resume_without_run_json(tmp_path: Path, golden: Path, ident: dict[str, Any]) -> None:
    """Check `ident` against `golden` as a resume does when run.json is gone."""
    rundir = RunDirectory(tmp_path)
    path = record_path(tmp_path, QUESTION.file_stem)
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(golden, path)
    rundir.check_identity(ident)
    rundir.load_record(QUESTION)


def _edits() -> dict[str, tuple[Any, list[str]]]:
    """Identity edits and the keys a resume must name for them."""

    def arm(ident: dict[str, Any]) -> None:
        ident["arm_options"]["rag"]["top_k"] = 3

    def threshold(ident: dict[str, Any]) -> None:
        ident["f1_threshold"] = 0.7

    def embedder_and_arm(ident: dict[str, Any]) -> None:
        ident["embedder"] = "openai:text-embedding-3-small:1536"
        ident["arm_options"]["tuned"]["eta"] = 0.2

    def new_arm(ident: dict[str, Any]) -> None:  # an arm one side did not run: no change
        ident["arm_options"] = {"raw": ident["arm_options"]["raw"], "other": {"kind": "raw"}}

    return {
        "arm": (arm, ["arm_options.rag"]),
        "threshold": (threshold, ["scoring.f1_threshold"]),
        "embedder_and_arm": (embedder_and_arm, ["embedder", "arm_options.tuned"]),
        "new_arm": (new_arm, []),
    }


@pytest.mark.parametrize("golden", [FULL, PRINTED], ids=["full", "fingerprint"])
def test_golden_records_validate(golden: Path) -> None:
    jsonschema.validate(json.loads(golden.read_text()), SCHEMA)


def test_the_golden_fingerprint_is_the_rule() -> None:
    """Changing the hash or the key names would refuse every existing run's resume."""
    stamped = json.loads(PRINTED.read_text())["provenance"]["identity_fingerprint"]
    assert fingerprint(_golden_identity()) == stamped
    assert saved_fingerprint(json.loads(FULL.read_text())["provenance"]) == stamped


@pytest.mark.parametrize("golden", [FULL, PRINTED], ids=["full", "fingerprint"])
def test_an_unchanged_identity_resumes(tmp_path: Path, golden: Path) -> None:
    _resume_without_run_json(tmp_path, golden, _golden_identity())


@pytest.mark.parametrize("golden", [FULL, PRINTED], ids=["full", "fingerprint"])
@pytest.mark.parametrize("edit", list(_edits()))
def test_a_changed_identity_names_the_same_keys_by_every_path(
    tmp_path: Path, golden: Path, edit: str
) -> None:
    """run.json (full identity) and a record of either form name one set of keys."""
    change, expected = _edits()[edit]
    ident = _golden_identity()
    change(ident)
    assert changed_keys(_golden_identity(), ident) == expected
    if not expected:
        _resume_without_run_json(tmp_path, golden, ident)
        return
    with pytest.raises(ConfigError) as refused:
        _resume_without_run_json(tmp_path, golden, ident)
    message = str(refused.value)
    assert "\n" not in message and "run.json is missing, unreadable or foreign" in message
    assert f"made with different {', '.join(expected)};" in message


def test_a_record_without_any_identity_is_checked_on_what_it_carries(tmp_path: Path) -> None:
    record = json.loads(FULL.read_text())
    provenance = record["provenance"]
    record["provenance"] = {k: provenance[k] for k in ("run", "dataset_sha256")}
    old = tmp_path / "old.json"
    old.write_text(json.dumps(record))
    ident = _golden_identity()
    ident["arm_options"]["rag"]["top_k"] = 3  # invisible to such a record
    _resume_without_run_json(tmp_path / "same", old, ident)
    ident["dataset_sha256"] = "0" * 64
    with pytest.raises(ConfigError, match=r"different dataset_sha256;"):
        _resume_without_run_json(tmp_path / "other", old, ident)


def test_arm_options_that_are_no_mapping_always_change() -> None:
    ident = _golden_identity()
    assert changed_keys({**ident, "arm_options": ["rag"]}, ident) == ["arm_options"]
    assert fingerprint_changes({"arm_options": "x"}, fingerprint(ident)) == ["arm_options"]


def test_records_carry_the_fingerprint_and_readable_model_ids(tmp_path: Path) -> None:
    run = compose_run()
    run.out = str(tmp_path)
    rundir = RunDirectory(tmp_path)
    ident = identity(run, "a" * 64, "p" * 64)
    rundir.write_run_json(run, ident)
    stamp = rundir.record_provenance
    assert "identity" not in stamp and stamp["identity_fingerprint"] == fingerprint(ident)
    assert {k: stamp[k] for k in ("answerer", "extractor", "embedder")} == {
        k: ident[k] for k in ("answerer", "extractor", "embedder")
    }
    meta = json.loads((tmp_path / "run.json").read_text())
    assert stamp["config_hash"] == meta["config_hash"] and stamp["run"] == tmp_path.name


def test_a_run_json_without_results_is_replaced_and_one_with_a_record_binds(
    tmp_path: Path,
) -> None:
    """A session that failed at start-up fixed no identity; a written record fixes it."""
    cfg = compose_run("dataset=smoke", "arms=[raw]")
    first = _golden_identity()
    RunDirectory(tmp_path).write_run_json(cfg, first)
    changed = _golden_identity()
    changed["answerer"] = "openai:http://127.0.0.1:9/v1:gpt-4o-mini"
    corrected = RunDirectory(tmp_path)
    corrected.check_identity(changed)  # no record, no prediction: replaced, not refused
    corrected.write_run_json(cfg, changed)
    assert (
        json.loads((tmp_path / "run.json").read_text())["identity"]["answerer"]
        == (changed["answerer"])
    )
    path = record_path(tmp_path, QUESTION.file_stem)
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(PRINTED, path)
    with pytest.raises(ConfigError, match="made with different answerer;"):
        RunDirectory(tmp_path).check_identity(first)
