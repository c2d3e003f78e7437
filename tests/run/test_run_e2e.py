"""`python -m bench.run` end to end on the smoke fixtures, as a user runs it."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import jsonschema
import pytest

from tests.support.e2e_support import ROOT, last_line, load_records, run_cli, strip_timings

ARMS = ["raw", "rag", "neuromorphic", "tuned"]
# smoke_run (tests/conftest.py): `dataset=smoke progress=false`, every default arm


def test_every_question_has_an_ok_result_for_every_arm(smoke_run: Path) -> None:
    records = load_records(smoke_run)
    assert len(records) == 16  # the smoke fixture's question count
    schema = json.loads((ROOT / "bench/schema/question_record.schema.json").read_text())
    for record in records.values():
        jsonschema.validate(record, schema)
        assert list(record["arms"]) == ARMS
        assert all(r["status"] == "ok" for r in record["arms"].values())
        assert all(r["outcome"] == "f1>=0.5" for r in record["arms"].values())


def test_adversarial_questions_keep_the_trap_and_no_gold(smoke_run: Path) -> None:
    adversarial = [r for r in load_records(smoke_run).values() if r["category"] == 5]
    assert adversarial and all(r["gold"] is None for r in adversarial)
    assert all(r["adversarial_answer"] for r in adversarial)


def test_run_json_has_provenance_and_is_labelled_offline(smoke_run: Path) -> None:
    meta = json.loads((smoke_run / "run.json").read_text())
    assert meta["schema_version"] == 1 and meta["offline"] is True
    assert len(meta["dataset"]["sha256"]) == 64
    assert meta["outcome"] == "f1>=0.5"
    assert set(meta["provenance"]) >= {"git_commit", "git_dirty", "packages", "python"}
    assert meta["arms"] == ARMS and meta["config_hash"]


def test_rerun_computes_nothing(smoke_run: Path, copy_run: Callable[[Path], Path]) -> None:
    smoke_run = copy_run(smoke_run)  # a rerun writes into its run directory
    before = {p.name: p.stat().st_mtime_ns for p in (smoke_run / "questions").iterdir()}
    proc = run_cli("dataset=smoke", f"out={smoke_run}", "progress=false")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "0 records written" in proc.stderr
    after = {p.name: p.stat().st_mtime_ns for p in (smoke_run / "questions").iterdir()}
    assert before == after


def test_resumed_run_equals_uninterrupted_run(smoke_run: Path, tmp_path: Path) -> None:
    resumed = tmp_path / "resumed"
    shutil.copytree(smoke_run, resumed, ignore=shutil.ignore_patterns("stores"))
    files = sorted((resumed / "questions").glob("*.json"))
    for path in files[:3]:
        path.unlink()  # as if the run died before these questions
    broken = json.loads(files[3].read_text())
    broken["arms"]["rag"] = {"status": "error", "error": "ConnectionError: reset"}
    files[3].write_text(json.dumps(broken))
    proc = run_cli("dataset=smoke", f"out={resumed}", "progress=false")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "4 records written" in proc.stderr
    original, again = load_records(smoke_run), load_records(resumed)
    assert {k: strip_timings(v) for k, v in original.items()} == {
        k: strip_timings(v) for k, v in again.items()
    }


def test_changed_arm_options_refuse_to_mix_into_the_same_run(
    smoke_run: Path, copy_run: Callable[[Path], Path]
) -> None:
    smoke_run = copy_run(smoke_run)
    proc = run_cli("dataset=smoke", f"out={smoke_run}", "arm_options.rag.top_k=3")
    assert proc.returncode == 2
    assert "arm_options.rag" in last_line(proc.stderr) and "out=" in last_line(proc.stderr)


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        (["arms=[raw,rgg]"], "unknown arm 'rgg'"),
        (["dataset=locomoo"], "did you mean 'locomo'?"),
        (["provider=opnai"], "did you mean 'openai'?"),
    ],
)
def test_unknown_names_fail_in_one_line_with_a_suggestion(tmp_path, overrides, expected) -> None:
    proc = run_cli(*overrides, f"out={tmp_path / 'run'}")
    assert proc.returncode == 2
    assert expected in proc.stderr and last_line(proc.stderr).startswith("error: ")
    assert "did you mean" in proc.stderr
    assert not (tmp_path / "run" / "questions").exists()


def test_malformed_dataset_file_is_one_line_and_writes_nothing(tmp_path) -> None:
    bad = tmp_path / "broken.json"
    bad.write_text('[{"sample_id": "x", "conversation": {}}')
    proc = run_cli("dataset=smoke", f"dataset.path={bad}", f"out={tmp_path / 'run'}")
    assert proc.returncode == 2
    assert last_line(proc.stderr).startswith("error: ") and "broken.json" in proc.stderr
    assert not (tmp_path / "run" / "questions").exists()


def test_wrong_checksum_of_the_canonical_file_is_refused(tmp_path) -> None:
    fake = tmp_path / "data"
    fake.mkdir()
    shutil.copy(ROOT / "datasets/fixtures/smoke_locomo.json", fake / "locomo10.json")
    proc = run_cli("dataset=locomo", f"out={tmp_path / 'run'}", env={"BENCH_DATA_DIR": str(fake)})
    assert proc.returncode == 2
    assert "locomo10.json" in last_line(proc.stderr) and "sha-256 mismatch" in proc.stderr.lower()
    assert not (tmp_path / "run" / "questions").exists()


@pytest.mark.slow
def test_supersession_fixture_records_each_arms_stale_fact_rate(tmp_path) -> None:
    out = tmp_path / "run"
    proc = run_cli(
        "dataset=supersession", "arms=[rag,neuromorphic]", f"out={out}", "progress=false"
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    stale = [
        r for r in load_records(out).values() if "stale_in_context" in r["arms"]["rag"]["scores"]
    ]
    assert stale
    # rag shows the whole old turn; the engine's override must keep the old value out.
    assert all(not r["arms"]["neuromorphic"]["scores"]["stale_in_context"] for r in stale)
    summary = run_cli(str(out), "--json", module="bench.summarise")
    assert summary.returncode == 0 and "stale" in summary.stdout


def test_resume_keeps_earlier_costs_and_ignores_unrequested_arms(smoke_run, tmp_path) -> None:
    resumed = tmp_path / "resumed"
    shutil.copytree(smoke_run, resumed, ignore=shutil.ignore_patterns("stores"))
    before = json.loads((resumed / "run.json").read_text())["accounting"]["total"]["calls"]
    path = sorted((resumed / "questions").glob("*.json"))[0]
    record = json.loads(path.read_text())
    record["arms"]["ghost"] = {"status": "error", "error": "from an older run"}
    path.write_text(json.dumps(record))
    # A record changed outside the harness is never re-blessed by a resume (issue 40):
    # the edit is accepted knowingly first, as docs/audit.md says.
    accept = run_cli(str(resumed), "--write", module="bench.verify")
    assert accept.returncode == 0, accept.stderr[-2000:]
    proc = run_cli("dataset=smoke", "arms=[raw]", f"out={resumed}", "progress=false")
    assert proc.returncode == 0, proc.stderr[-2000:]  # ghost was not asked for
    after = json.loads((resumed / "run.json").read_text())["accounting"]["total"]["calls"]
    assert before > 0 and after == before  # nothing recomputed, nothing forgotten


def test_an_unreadable_record_is_reported_not_overwritten(smoke_run, tmp_path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(smoke_run, copy, ignore=shutil.ignore_patterns("stores"))
    path = sorted((copy / "questions").glob("*.json"))[0]
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "schema_version": 99}))
    proc = run_cli("dataset=smoke", f"out={copy}", "progress=false")
    assert proc.returncode == 2 and path.name in last_line(proc.stderr)
    assert json.loads(path.read_text())["schema_version"] == 99


def test_primary_judge_must_name_a_configured_judge(tmp_path) -> None:
    proc = run_cli("dataset=smoke", "scoring.primary_judge=llm", f"out={tmp_path / 'run'}")
    assert proc.returncode == 2 and "scoring.primary_judge=llm" in last_line(proc.stderr)
    assert not (tmp_path / "run" / "questions").exists()
