"""BEAM loader: the upstream tier layout, ids, evidence, the folder hash, bad input, download."""

from __future__ import annotations

import functools
import http.server
import json
import os
import shutil
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.config import DatasetConfig
from bench.errors import DatasetError
from bench.loaders import load_dataset
from bench.loaders.beam import ABILITIES, load_beam
from bench.loaders.beam_source import TIERS, Tier, download_tier, folder_sha256
from bench.loaders.resolve import PROJECT_ROOT
from bench.types import Dataset

FIXTURE = PROJECT_ROOT / "datasets" / "fixtures" / "beam"


def shared_data() -> Path | None:
    """The shared offline data folder when this machine has it ($BENCH_DATA_DIR first)."""
    for candidate in (os.environ.get("BENCH_DATA_DIR"), "/work/shared/data"):
        if candidate and (Path(candidate) / "beam-100k").is_dir():
            return Path(candidate)
    return None


@pytest.fixture(scope="module")
def beam() -> Dataset:
    """The BEAM smoke fixture."""
    return load_beam(FIXTURE, "smoke_beam")


def test_sessions_turns_and_anchors(beam: Dataset) -> None:
    """Batches are sessions dated by their first time anchor; ids are upstream's."""
    one, two = beam.conversations
    assert one.conversation_id == "beam-128k-1" and one.speakers == ("user", "assistant")
    assert [s.date_time for s in one.sessions] == [
        "January-10-2024",
        "February-02-2024",
        "March-01-2024",
    ]
    assert [t.dia_id for t in one.sessions[0].turns] == ["0", "1", "2", "3", "4", "5"]
    assert one.sessions[1].turns[0].text.endswith("->-> 2,1")  # content verbatim
    assert {t.session for t in one.sessions[2].turns} == {3}
    # the 10M shape (batches wrapped in plans) flattens to one session per batch
    assert [s.date_time for s in two.sessions] == ["May-05-2024", "June-01-2024"]


def test_questions_keep_ability_rubric_difficulty_and_ideal_answer(beam: Dataset) -> None:
    """Each ability's ideal-answer field becomes gold; abstention ids end in `_abs`."""
    by_id = {q.question_id: q for q in beam.questions()}
    assert sorted(by_id) == sorted(
        [
            "beam-128k-1:abstention:0_abs",
            "beam-128k-1:contradiction_resolution:0",
            "beam-128k-1:event_ordering:0",
            "beam-128k-1:information_extraction:0",
            "beam-128k-1:knowledge_update:0",
            "beam-128k-2:information_extraction:0",
            "beam-128k-2:temporal_reasoning:0",
        ]
    )
    abstain = by_id["beam-128k-1:abstention:0_abs"]
    assert abstain.is_abstention and abstain.evidence == () and abstain.category == 1
    assert abstain.gold is not None and abstain.gold.startswith("Based on the provided chat")
    order = by_id["beam-128k-1:event_ordering:0"]
    assert order.rubric == ("Basil", "Mint", "Rosemary") and order.difficulty == "medium"
    assert (
        order.question_type == "event_ordering"
        and order.category == ABILITIES.index("event_ordering") + 1
    )
    assert order.evidence == ("0", "6", "12")  # nested lists flattened, repeats dropped
    assert by_id["beam-128k-1:knowledge_update:0"].evidence == ("4", "8")  # object of lists
    assert by_id["beam-128k-1:contradiction_resolution:0"].gold.startswith("You said")  # type: ignore[union-attr]
    assert by_id["beam-128k-2:information_extraction:0"].difficulty == ""  # kept as written


def test_folder_hash_ignores_layout_and_extra_files(tmp_path: Path) -> None:
    """Flat and nested question files hash alike; extra files do not count; bytes do."""
    copy = tmp_path / "tier"
    shutil.copytree(FIXTURE, copy)
    nested = copy / "1" / "probing_questions"
    nested.mkdir()
    shutil.move(copy / "1" / "probing_questions.json", nested / "probing_questions.json")
    (copy / "1" / "plan.txt").write_text("upstream extra")
    assert folder_sha256(copy) == folder_sha256(FIXTURE) == load_beam(copy).sha256
    (copy / "2" / "chat.json").write_text((FIXTURE / "2" / "chat.json").read_text() + "\n")
    assert folder_sha256(copy) != folder_sha256(FIXTURE)


def _broken(tmp_path: Path, conv: str, name: str, edit: Any) -> Path:
    """A copy of the fixture with one JSON file edited in place by `edit`."""
    root = tmp_path / "tier"
    shutil.copytree(FIXTURE, root)
    path = root / conv / name
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))
    return root


@pytest.mark.parametrize(
    ("conv", "name", "edit", "message"),
    [
        ("1", "probing_questions.json", lambda d: d.update(recall=[]), "recall: unknown ability"),
        ("1", "probing_questions.json", lambda d: d["event_ordering"][0].pop("rubric"),
         "event_ordering[0]: 'rubric' missing"),
        ("1", "probing_questions.json", lambda d: d["event_ordering"][0].update(rubric=[]),
         "event_ordering[0].rubric: empty"),
        ("1", "probing_questions.json", lambda d: d["abstention"][0].pop("ideal_response"),
         "abstention[0]: 'ideal_response' missing"),
        ("1", "probing_questions.json",
         lambda d: d["knowledge_update"][0]["source_chat_ids"].update(updated_info=["8"]),
         "knowledge_update[0].source_chat_ids.updated_info[0]: must be an integer"),
        ("1", "probing_questions.json",  # issue 40, item 12: was accepted silently
         lambda d: d["event_ordering"].append(dict(d["event_ordering"][0])),
         "repeats the question of event_ordering[0]: a duplicated probing question"),
        ("1", "chat.json", lambda d: d[0]["turns"][0][1].update(id=0),
         "[0].turns[0][1].id: id 0 repeats"),
        ("1", "chat.json", lambda d: d[1]["turns"][0][0].pop("content"),
         "[1].turns[0][0]: 'content' missing"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line_naming_file_and_path(
    tmp_path: Path, conv: str, name: str, edit: Any, message: str
) -> None:
    """Every defect is a single-line DatasetError with the file and the JSON path."""
    root = _broken(tmp_path, conv, name, edit)
    with pytest.raises(DatasetError) as info:
        load_beam(root)
    text = str(info.value)
    assert "\n" not in text and str(root / conv / name) in text and message in text


def test_unknown_tier_and_missing_folder_are_one_line() -> None:
    """A tier outside the four, and a path that is no tier folder, name the fix."""
    with pytest.raises(DatasetError, match=r"dataset.tier=2m: unknown BEAM tier; use one of 128k"):
        load_dataset(DatasetConfig(name="beam", loader="beam", tier="2m", path=str(FIXTURE)))
    with pytest.raises(DatasetError, match=r"has no numbered conversation folders"):
        load_dataset(DatasetConfig(name="beam", loader="beam", path=str(FIXTURE / "1")))


@pytest.fixture
def upstream_server(tmp_path: Path) -> Iterator[str]:
    """127.0.0.1 serving the fixture in the upstream repository's layout (`100K/<n>/…`)."""
    root = tmp_path / "upstream"
    for n in ("1", "2"):
        src = FIXTURE / n
        dest = root / "100K" / n / "probing_questions"
        dest.mkdir(parents=True)
        shutil.copy(src / "chat.json", dest.parent / "chat.json")
        questions = src / "probing_questions.json"
        shutil.copy(
            questions
            if questions.is_file()
            else src / "probing_questions" / "probing_questions.json",
            dest,
        )

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            """Keep test output clean."""

    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(root))
    )
    thread = threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def test_download_lands_in_the_flat_layout(
    upstream_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tier is fetched file by file from the upstream layout; its folder hash matches."""
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    target = tmp_path / "cache" / "beam-100k"
    download_tier(upstream_server, Tier("100K", 2, None), target)
    assert (target / "2" / "probing_questions.json").is_file()
    assert folder_sha256(target) == folder_sha256(FIXTURE)


def test_shared_128k_tier() -> None:
    """The shared copy: 20 conversations, 400 questions, 40 per ability, the pinned hash."""
    data = shared_data()
    if data is None:
        pytest.skip("no shared BEAM copy on this machine")
    ds = load_beam(data / "beam-100k")
    assert len(ds.conversations) == 20 and ds.sha256 == TIERS["128k"].sha256
    assert Counter(q.question_type for q in ds.questions()) == {a: 40 for a in ABILITIES}
    turns = {t.dia_id for c in ds.conversations[:1] for t in c.turns()}
    assert {e for q in ds.conversations[0].questions for e in q.evidence} <= turns


def test_interrupted_cache_download_resumes(
    upstream_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cache folder missing files is completed, not loaded half-way."""
    monkeypatch.setitem(TIERS, "128k", Tier("100K", 2, folder_sha256(FIXTURE)))
    monkeypatch.setenv("BENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("BENCH_DATA_DIR", raising=False)
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    partial = tmp_path / "cache" / "beam-100k" / "1"
    partial.mkdir(parents=True)
    shutil.copy(FIXTURE / "1" / "chat.json", partial / "chat.json")
    cfg = DatasetConfig(name="beam", loader="beam", tier="128k", url=upstream_server)
    ds = load_dataset(cfg)
    assert len(ds.questions()) == 7 and ds.path == str(tmp_path / "cache" / "beam-100k")
