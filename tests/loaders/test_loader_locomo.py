"""LoCoMo loader: the counts of the real file and every rule of methodology §1."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import pytest

from bench.config import DatasetConfig
from bench.errors import DatasetError
from bench.loaders import dataset_stats, load_dataset, load_locomo
from bench.loaders.resolve import PROJECT_ROOT, sha256_file
from bench.types import Dataset

SMOKE = PROJECT_ROOT / "datasets" / "fixtures" / "smoke_locomo.json"
LOCOMO_SHA256 = "79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4"


def _real_locomo() -> Path | None:
    """The real locomo10.json from $BENCH_DATA_DIR, ../shared/data or the cache, if any."""
    dirs = [os.environ.get("BENCH_DATA_DIR"), "/work/shared/data"]
    dirs += [str(PROJECT_ROOT.parent / "shared" / "data"), str(PROJECT_ROOT / "datasets/.cache")]
    for d in dirs:
        if d and (Path(d) / "locomo10.json").is_file():
            return Path(d) / "locomo10.json"
    return None


REAL = _real_locomo()
needs_real = pytest.mark.skipif(
    REAL is None,
    reason="locomo10.json not found (set BENCH_DATA_DIR=<dir with locomo10.json> to run)",
)


@pytest.fixture(scope="module")
def real() -> Dataset:
    """The real file, found as the canonical name so its checksum is enforced."""
    assert REAL is not None
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("BENCH_DATA_DIR", str(REAL.parent))
        return load_dataset(DatasetConfig(sha256=LOCOMO_SHA256))


@pytest.fixture(scope="module")
def smoke() -> Dataset:
    """The hand-written smoke fixture."""
    return load_locomo(SMOKE, name="smoke")


@needs_real
def test_real_file_counts(real: Dataset) -> None:
    """The published figures: 10 / 272 / 5,882 / 1,226 / 1,986 and 282/321/96/841/446."""
    assert dataset_stats(real) == {
        "conversations": 10,
        "sessions": 272,
        "turns": 5882,
        "image_turns": 1226,
        "questions": 1986,
        "categories": {1: 282, 2: 321, 3: 96, 4: 841, 5: 446},
    }
    assert real.sha256 == LOCOMO_SHA256


@needs_real
def test_real_file_rules(real: Dataset) -> None:
    """Ids unique, category-5 gold is None, int answers become text, dates from own keys."""
    questions = real.questions()
    assert len({q.question_id for q in questions}) == 1986
    assert len({(q.conversation_id, q.question) for q in questions}) == 1986 - 12
    assert all((q.gold is None) == (q.category == 5) for q in questions)
    assert sum(q.adversarial_answer is not None for q in questions) == 446
    assert "2022" in {q.gold for q in questions}
    conv26 = real.conversations[0]
    assert conv26.conversation_id == "conv-26"
    assert [s.index for s in conv26.sessions] == list(range(1, 20))
    assert conv26.session(10).date_time == "8:56 pm on 20 July, 2023"
    assert conv26.speakers == ("Caroline", "Melanie")
    ev = {q.question_id: q.evidence for q in questions}
    assert ev["conv-26:37"] == ("D8:6", "D9:17")
    assert ev["conv-43:18"][4] == "D11:26"
    assert len(ev["conv-43:18"]) == 7
    assert ev["conv-42:88"] == ("D1:18", "D1:20")
    assert ev["conv-49:31"] == ("D9:1", "D4:4", "D4:6")
    assert all(e.startswith("D") and e.count(":") == 1 for q in questions for e in q.evidence)


def test_smoke_counts(smoke: Dataset) -> None:
    """The fixture's figures as stated in datasets/fixtures/README.md."""
    assert dataset_stats(smoke) == {
        "conversations": 2,
        "sessions": 14,
        "turns": 30,
        "image_turns": 2,
        "questions": 16,
        "categories": {1: 1, 2: 2, 3: 1, 4: 8, 5: 4},
    }
    assert smoke.name == "smoke"
    assert smoke.sha256 == sha256_file(SMOKE)


def test_sessions_in_integer_order(smoke: Dataset) -> None:
    """Keys are stored as session_1, session_10, …; sessions come out 1..12."""
    conv = smoke.conversations[0]
    keys = [k for k in json.loads(SMOKE.read_text())[0]["conversation"] if k[-1].isdigit()]
    assert keys[:3] == ["session_1", "session_10", "session_11"]
    assert [s.index for s in conv.sessions] == list(range(1, 13))
    assert [t.dia_id for t in conv.turns()][:3] == ["D1:1", "D1:2", "D2:1"]
    assert all(t.session == s.index for s in conv.sessions for t in s.turns)


def test_dates_by_own_key(smoke: Dataset) -> None:
    """Each session takes its own date; the two extra date keys are ignored."""
    conv = smoke.conversations[0]
    assert conv.session(10).date_time == "2:02 pm on 1 August, 2023"
    assert conv.session(2).date_time == "10:05 am on 15 May, 2023"
    assert conv.session(12).header() == "[Session 12 — 12:15 pm on 2 September, 2023]"
    assert len(conv.sessions) == 12


def test_speakers_and_speaker_b_first(smoke: Dataset) -> None:
    """Both speakers are kept; session 2 opens with speaker_b."""
    conv = smoke.conversations[0]
    assert conv.speakers == ("Alice", "Bob")
    assert conv.session(2).turns[0].speaker == "Bob"


def test_image_caption_rendered(smoke: Dataset) -> None:
    """blip_caption becomes image_caption and shows in the rendered turn."""
    turn = smoke.conversations[0].session(4).turns[0]
    assert turn.image_caption == "a photo of a red ceramic bowl on a wooden table"
    assert turn.render() == (
        "Alice: Look what I made in my pottery class! "
        "[shares a photo: a photo of a red ceramic bowl on a wooden table]"
    )
    assert smoke.conversations[0].session(4).turns[1].image_caption is None


def test_repeated_question_text_distinct_ids(smoke: Dataset) -> None:
    """The same text at qa 5 and qa 7 keeps ids smoke-1:5 and smoke-1:7."""
    qs = {q.question_id: q for q in smoke.questions()}
    assert qs["smoke-1:5"].question == qs["smoke-1:7"].question == "What color is Alice's bike?"
    assert len(qs) == 16
    assert qs["smoke-2:0"].conversation_id == "smoke-2"


def test_gold_rules(smoke: Dataset) -> None:
    """int → text, list → comma-joined, ';' kept, category 5 → None with the trap kept."""
    qs = {q.question_id: q for q in smoke.questions()}
    assert qs["smoke-1:1"].gold == "3"
    assert qs["smoke-1:2"].gold == "a cat named Miso, a dog named Pepper"
    assert qs["smoke-1:2"].category == 1
    assert qs["smoke-1:3"].gold == "marine biology; he loves the ocean"
    assert (qs["smoke-1:10"].gold, qs["smoke-1:10"].adversarial_answer) == (None, "3")
    assert (qs["smoke-1:12"].gold, qs["smoke-1:12"].adversarial_answer) == (None, "Yes")
    assert qs["smoke-1:0"].adversarial_answer is None


def test_evidence_normalised(smoke: Dataset) -> None:
    """'D3:1; D11:2' and 'D2:1 D2:2' split; 'D:7:1' repaired."""
    qs = {q.question_id: q for q in smoke.questions()}
    assert qs["smoke-1:2"].evidence == ("D3:1", "D11:2")
    assert qs["smoke-1:3"].evidence == ("D2:1", "D2:2")
    assert qs["smoke-1:6"].evidence == ("D7:1",)


def _write(tmp_path: Path, data: Any) -> Path:
    """Write `data` as JSON to a LoCoMo-looking file name."""
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(data))
    return path


def test_stale_answer_and_empty_session(tmp_path: Path) -> None:
    """Optional stale_answer is carried; an empty session list is kept as an empty session."""
    data = json.loads(SMOKE.read_text())
    data[0]["qa"][5]["stale_answer"] = "red"
    data[0]["conversation"]["session_3"] = []
    ds = load_locomo(_write(tmp_path, data))
    assert ds.questions()[5].stale_answer == "red"
    assert ds.conversations[0].session(3).turns == ()
    assert ds.name == "locomo"


def _mutations() -> list[tuple[str, Any, str]]:
    """(case id, mutation of the smoke data, JSON path or text the message must name)."""

    def edit(fn: Any) -> Any:
        def apply(data: Any) -> Any:
            fn(data)
            return data

        return apply

    return [
        ("not-a-list", lambda d: {"x": d}, "top level (a list of conversations)"),
        ("no-conversation", edit(lambda d: d[1].pop("conversation")), "conversations[1]"),
        ("no-qa", edit(lambda d: d[0].pop("qa")), "'qa' missing"),
        ("no-sample-id", edit(lambda d: d[1].pop("sample_id")), "'sample_id' missing"),
        ("no-category", edit(lambda d: d[0]["qa"][3].pop("category")), "qa[3]: 'category'"),
        ("str-category", edit(lambda d: d[0]["qa"][3].update(category="3")), "qa[3].category"),
        ("bool-category", edit(lambda d: d[0]["qa"][3].update(category=True)), "qa[3].category"),
        ("no-answer", edit(lambda d: d[0]["qa"][1].pop("answer")), "qa[1]: 'answer' missing"),
        ("dict-answer", edit(lambda d: d[0]["qa"][1].update(answer={})), "qa[1].answer"),
        (
            "no-date",
            edit(lambda d: d[0]["conversation"].pop("session_11_date_time")),
            "'session_11_date_time' missing",
        ),
        ("session-not-list", edit(lambda d: d[1]["conversation"].update(session_2="x")), "2"),
        ("no-text", edit(lambda d: d[1]["conversation"]["session_1"][0].pop("text")), "'text'"),
        ("no-speaker-b", edit(lambda d: d[1]["conversation"].pop("speaker_b")), "'speaker_b'"),
        ("evidence-int", edit(lambda d: d[0]["qa"][0].update(evidence=[3])), "evidence[0]"),
        ("dup-sample", edit(lambda d: d[1].update(sample_id="smoke-1")), "repeated"),
    ]


@pytest.mark.parametrize(
    ("mutate", "needle"), [m[1:] for m in _mutations()], ids=[m[0] for m in _mutations()]
)
def test_malformed_file_one_line_error(tmp_path: Path, mutate: Any, needle: str) -> None:
    """Each defect is a DatasetError on one line naming the file, the place and a fix."""
    path = _write(tmp_path, mutate(copy.deepcopy(json.loads(SMOKE.read_text()))))
    with pytest.raises(DatasetError) as info:
        load_locomo(path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: ")
    assert needle in message
    assert "fix the file" in message


@pytest.mark.parametrize(
    ("content", "needle"),
    [("[{", "invalid JSON at line 1"), (None, "file not found"), (b"\xff\xfe[", "not UTF-8 text")],
)
def test_unreadable_file_one_line_error(tmp_path: Path, content: Any, needle: str) -> None:
    """Invalid JSON, a missing file and bad bytes each give a one-line DatasetError."""
    path = tmp_path / "locomo10.json"
    if isinstance(content, str):
        path.write_text(content)
    elif isinstance(content, bytes):
        path.write_bytes(content)
    with pytest.raises(DatasetError) as info:
        load_locomo(path)
    assert "\n" not in str(info.value)
    assert str(info.value).startswith(f"{path}: {needle}")
