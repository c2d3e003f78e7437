"""BEAM tiers from the Hub: a parquet file in a Hub cache built here, read like the tier folder.

The rows are made from the committed fixture tier (datasets/fixtures/beam) in the shape
public readers of `Mohammadta/BEAM` use: `chat` a list of batches of messages,
`probing_questions` a string (JSON for one row, a Python literal for the other).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bench.errors import DatasetError
from bench.loaders import load_dataset
from bench.loaders.beam import load_beam
from bench.loaders.beam_hub import load_beam_parquet
from bench.loaders.beam_source import conversation_folders, questions_file
from bench.types import HubSource
from tests.run.test_settings import compose_run
from tests.support.e2e_support import ROOT, run_cli

FIXTURE = ROOT / "datasets" / "fixtures" / "beam"
REPO, REVISION = "Mohammadta/BEAM", "3205395e897e7318c7b094ef4e6047b9b82dbb03"
FILE = "data/100K-00000-of-00001.parquet"


def hub_row(folder: Path, literal: bool) -> dict[str, Any]:
    """One tier-folder conversation as a Hub row: batches of messages, questions as text."""
    batches = []
    for item in json.loads((folder / "chat.json").read_text()):
        inner = item if "turns" in item else next(iter(item.values()))  # a 10M-style plan
        for batch in inner if isinstance(inner, list) else [inner]:
            batches.append([message for exchange in batch["turns"] for message in exchange])
    questions = json.loads(questions_file(folder).read_text())
    text = repr(questions) if literal else json.dumps(questions)
    return {"conversation_id": folder.name, "chat": batches, "probing_questions": text}


def write_parquet(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def hub_cache(root: Path) -> Path:
    """`Mohammadta/BEAM` at REVISION in the Hub client's cache layout, with the fixture's rows."""
    folder = root / "datasets--Mohammadta--BEAM"
    (folder / "refs").mkdir(parents=True)
    (folder / "refs" / "main").write_text(REVISION)
    rows = [hub_row(f, literal=i == 1) for i, f in enumerate(conversation_folders(FIXTURE))]
    return write_parquet(folder / "snapshots" / REVISION / FILE, rows)


@pytest.fixture
def offline_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No local tier anywhere; the Hub cache under tmp_path, offline. Returns the parquet."""
    from huggingface_hub import constants

    served = hub_cache(tmp_path / "hf")
    (tmp_path / "empty").mkdir()
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setenv("BENCH_DATA_DIR", str(tmp_path / "empty"))
    monkeypatch.setenv("BENCH_CACHE_DIR", str(tmp_path / "cache"))
    return served


def test_the_128k_tier_from_the_hub_equals_the_tier_folder(offline_hub: Path) -> None:
    cfg = compose_run("dataset=beam", "dataset.tier=128k").dataset
    hub = load_dataset(cfg)
    folder = load_beam(FIXTURE, "beam", "128k")
    assert hub.conversations == folder.conversations  # every session, turn and question
    assert len(hub.questions()) == 7 and [c.conversation_id for c in hub.conversations] == [
        "beam-128k-1",
        "beam-128k-2",
    ]
    sha = hashlib.sha256(offline_hub.read_bytes()).hexdigest()
    assert (hub.path, hub.sha256) == (str(offline_hub), sha)
    assert hub.hub == HubSource(REPO, REVISION, FILE, sha256_verified=False)
    assert not (offline_hub.parents[5] / "cache").exists()  # nothing copied out of the Hub cache


def test_a_pinned_parquet_checksum_is_enforced(offline_hub: Path) -> None:
    sha = hashlib.sha256(offline_hub.read_bytes()).hexdigest()
    cfg = compose_run("dataset=beam", f"dataset.sha256={sha}").dataset
    assert load_dataset(cfg).hub == HubSource(REPO, REVISION, FILE, sha256_verified=True)
    other = compose_run("dataset=beam", f"dataset.sha256={'0' * 64}").dataset
    with pytest.raises(DatasetError, match=f"SHA-256 mismatch \\(Hub {REPO}@{REVISION[:12]}\\)"):
        load_dataset(other)


def test_a_local_copy_of_the_parquet_file_is_read_as_dataset_path(tmp_path: Path) -> None:
    copy = hub_cache(tmp_path / "hf")
    cfg = compose_run("dataset=beam", f"dataset.path={copy}").dataset
    loaded = load_dataset(cfg)
    assert loaded.conversations == load_beam(FIXTURE, "beam", "128k").conversations
    assert (loaded.path, loaded.hub) == (str(copy), None)
    missing = compose_run("dataset=beam", f"dataset.path={tmp_path / 'x.parquet'}").dataset
    with pytest.raises(DatasetError, match="x.parquet: file not found"):
        load_dataset(missing)


def test_10m_and_a_missing_split_are_one_line(offline_hub: Path) -> None:
    cfg = compose_run("dataset=beam", "dataset.tier=500k").dataset
    with pytest.raises(DatasetError, match="data/500K-00000-of-00001.parquet of the Hub dataset"):
        load_dataset(cfg)
    ten = compose_run("dataset=beam", "dataset.tier=10m", "dataset.url=null").dataset
    with pytest.raises(DatasetError, match="beam-10m: not found .* or dataset.path=<tier folder>"):
        load_dataset(ten)


def _row(**change: Any) -> dict[str, Any]:
    return hub_row(FIXTURE / "1", literal=False) | change


@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        ([{"conversation_id": "1", "messages": "[]"}],
         "columns chat, probing_questions missing (needs conversation_id, chat, "
         "probing_questions; found conversation_id, messages)"),
        ([_row(probing_questions="{'abstention': [")],
         "row 0 probing_questions: neither JSON (invalid JSON"),
        ([_row(probing_questions="[" * 80 + "]" * 80)],
         "nor a Python literal (nested deeper than 64 levels)"),
        ([_row(probing_questions="{'abstention': (1, 2)}")], "a literal holding a tuple"),
        ([_row(probing_questions="[]")], "row 0 probing_questions: top level"),
        ([_row(chat=[[{"role": "user", "content": "x"}]])], "row 0 chat: [0].turns[0][0]"),
        ([_row(conversation_id="../1")], "row 0: conversation_id: not 1-64 letters"),
        ([_row(), _row()], "repeat"),
    ],
)  # fmt: skip
def test_malformed_rows_are_one_dataset_error(
    tmp_path: Path, rows: list[dict[str, Any]], expected: str
) -> None:
    path = write_parquet(tmp_path / "t.parquet", rows)
    with pytest.raises(DatasetError) as info:
        load_beam_parquet(path)
    message = str(info.value)
    assert expected in message and "\n" not in message, message


def test_a_file_that_is_not_parquet_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    path.write_text("not parquet")
    with pytest.raises(DatasetError, match="not a readable parquet file"):
        load_beam_parquet(path)


@pytest.mark.slow
def test_beam_from_the_hub_cache_offline_records_the_pin(tmp_path: Path) -> None:
    served = hub_cache(tmp_path / "hf")
    (tmp_path / "empty").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "BENCH_"))} | {
        "HF_HUB_CACHE": str(tmp_path / "hf"),
        "HF_HUB_OFFLINE": "1",
        "BENCH_DATA_DIR": str(tmp_path / "empty"),
        "BENCH_CACHE_DIR": str(tmp_path / "cache"),
    }
    out = tmp_path / "run"
    proc = run_cli(
        "dataset=beam", "dataset.tier=128k", "arms=[raw]", f"out={out}", "progress=false", env=env
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    sha = hashlib.sha256(served.read_bytes()).hexdigest()
    notes = [ln for ln in (proc.stdout + proc.stderr).splitlines() if "not verified" in ln]
    assert len(notes) == 1 and notes[0].endswith(f"dataset.sha256={sha}"), notes
    dataset = json.loads((out / "run.json").read_text())["dataset"]
    assert dataset == dataset | {
        "hf_repo": REPO,
        "hf_revision": REVISION,
        "hf_file": FILE,
        "sha256": sha,
        "hf_sha256_verified": False,
    }
