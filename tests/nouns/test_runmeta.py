"""run.json through its one typed reader: round trip, and tolerance of foreign files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.runmeta import DatasetMeta, JudgeMeta, RunMeta, read_run_meta

ROOT = Path(__file__).resolve().parents[2]


def test_round_trip_is_exact(tmp_path: Path) -> None:
    meta = RunMeta(
        run_name="r",
        arms=["raw", "rag"],
        dataset=DatasetMeta("locomo", "/x", "ab"),
        judges=[JudgeMeta("llm", "m", "h")],
        offline=False,
        outcome="judge:llm",
        config={"arm_options": {"rag": {"top_k": 7}}, "scoring": {"f1_threshold": 0.5}},
    )
    path = tmp_path / "run.json"
    path.write_text(json.dumps(meta.to_json()))
    back, notes = read_run_meta(path)
    assert back == meta and notes == []
    assert back.arm_option("rag", "top_k") == 7 and back.arm_option("raw", "top_k") is None
    assert back.config_value("scoring", "f1_threshold") == 0.5


@pytest.mark.parametrize("committed", sorted(ROOT.glob("results/*/run.json")), ids=str)
def test_committed_runs_read_without_notes_and_write_back_identically(committed: Path) -> None:
    meta, notes = read_run_meta(committed)
    assert meta is not None and notes == []
    assert meta.to_json() == json.loads(committed.read_text())


@pytest.mark.parametrize(
    ("text", "expect"),
    [
        ("", "unreadable"),
        ('{"run_name": "x", "arms"', "unreadable"),
        ("[]", "not a JSON object"),
        ('{"dataset": "locomo"}', "dataset is not an object"),
        ('{"offline": "yes", "arms": "raw"}', "offline has the wrong type"),
    ],
)
def test_foreign_or_partial_files_give_notes_not_errors(
    tmp_path: Path, text: str, expect: str
) -> None:
    path = tmp_path / "run.json"
    path.write_text(text)
    meta, notes = read_run_meta(path)
    assert any(expect in n for n in notes), notes
    if meta is not None:
        assert meta.arms == [] and meta.offline is None


def test_absent_file_is_a_note(tmp_path: Path) -> None:
    assert read_run_meta(tmp_path / "run.json") == (None, ["run.json absent: run metadata unknown"])
