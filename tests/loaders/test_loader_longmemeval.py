"""LongMemEval loader: isolated haystacks, types coded as integers, abstention by suffix."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from bench.config import DatasetConfig
from bench.errors import DatasetError
from bench.loaders import dataset_stats, load_dataset, load_longmemeval
from bench.loaders.longmemeval import LONGMEMEVAL_CATEGORIES
from bench.loaders.resolve import PROJECT_ROOT
from bench.types import Dataset

FIXTURE = PROJECT_ROOT / "datasets" / "fixtures" / "smoke_longmemeval.json"


@pytest.fixture(scope="module")
def lme() -> Dataset:
    """The LongMemEval smoke fixture."""
    return load_longmemeval(FIXTURE)


def test_counts(lme: Dataset) -> None:
    """3 questions, each its own conversation; 7 sessions, 14 turns in all."""
    assert dataset_stats(lme) == {
        "conversations": 3,
        "sessions": 7,
        "turns": 14,
        "image_turns": 0,
        "questions": 3,
        "categories": {1: 2, 5: 1},
    }


def test_isolated_haystacks(lme: Dataset) -> None:
    """Each conversation holds exactly its own question and only its own sessions."""
    raw = json.loads(FIXTURE.read_text())
    for conv, item in zip(lme.conversations, raw, strict=True):
        assert conv.conversation_id == item["question_id"]
        assert [q.question_id for q in conv.questions] == [item["question_id"]]
        assert conv.questions[0].conversation_id == conv.conversation_id
        sids = {t.dia_id.rsplit(":", 1)[0] for t in conv.turns()}
        assert sids == set(item["haystack_session_ids"])
        assert [s.date_time for s in conv.sessions] == item["haystack_dates"]
    dia_ids = [t.dia_id for c in lme.conversations for t in c.turns()]
    assert len(dia_ids) == len(set(dia_ids))


def test_turns_and_question_fields(lme: Dataset) -> None:
    """role → speaker, dia_id `<sid>:<j>`, type → category, int answer → text, evidence."""
    conv = lme.conversations[1]
    assert conv.speakers == ("user", "assistant")
    first = conv.session(1).turns[0]
    assert (first.speaker, first.dia_id, first.session) == ("user", "answer_ku_1a:1", 1)
    assert conv.session(3).turns[1].render().startswith("assistant: Great progress")
    q = conv.questions[0]
    assert (q.question_type, q.category) == ("knowledge-update", 5)
    assert q.gold == "4"
    assert q.question_date == "2023/08/15 (Tue) 08:30"
    assert q.evidence == ("answer_ku_1a:1", "answer_ku_1b:1")
    assert not q.is_abstention


def test_abstention_by_suffix(lme: Dataset) -> None:
    """Only the `_abs` question is an abstention; its type is still a normal type."""
    flags = {q.question_id: q.is_abstention for q in lme.questions()}
    assert flags == {"smoke_ssu_1": False, "smoke_ku_1": False, "smoke_ssu_2_abs": True}
    abs_q = lme.conversations[2].questions[0]
    assert abs_q.question_type == "single-session-user"
    assert abs_q.evidence == ()


def test_category_mapping_covers_six_types() -> None:
    """Six types, codes 1..6, each distinct."""
    assert sorted(LONGMEMEVAL_CATEGORIES) == [1, 2, 3, 4, 5, 6]
    assert len(set(LONGMEMEVAL_CATEGORIES.values())) == 6


def test_dispatch_through_load_dataset() -> None:
    """`dataset.loader=longmemeval` with a relative path resolves against the project root."""
    cfg = DatasetConfig(
        name="smoke_longmemeval",
        loader="longmemeval",
        path="datasets/fixtures/smoke_longmemeval.json",
        filename="smoke_longmemeval.json",
    )
    ds = load_dataset(cfg)
    assert ds.name == "smoke_longmemeval"
    assert len(ds.questions()) == 3


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        (lambda d: d[0].update(question_type="trivia"), "questions[0].question_type"),
        (lambda d: d[1]["haystack_dates"].pop(), "lengths differ (3/2/3)"),
        (lambda d: d[2].pop("answer"), "questions[2]: 'answer' missing"),
        (lambda d: d[0]["haystack_sessions"][1][0].pop("role"), "haystack_sessions[1][0]"),
        (lambda d: d[1].update(question_id="smoke_ssu_1"), "repeated"),
        (lambda d: d[0].pop("haystack_session_ids"), "'haystack_session_ids' missing"),
    ],
    ids=["unknown-type", "length-mismatch", "no-answer", "no-role", "dup-id", "no-ids"],
)
def test_malformed_one_line_error(tmp_path: Path, mutate: Any, needle: str) -> None:
    """Each defect is a DatasetError on one line naming the file and the JSON path."""
    data = copy.deepcopy(json.loads(FIXTURE.read_text()))
    mutate(data)
    path = tmp_path / "lme.json"
    path.write_text(json.dumps(data))
    with pytest.raises(DatasetError) as info:
        load_longmemeval(path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: ")
    assert needle in message


def test_limit_questions_counts_questions_on_longmemeval() -> None:
    """One question per haystack: limit.questions=2 is two questions, not two per haystack."""
    from bench.loaders import load_dataset
    from bench.run.pipeline import limit_dataset
    from tests.run.test_settings import compose_run

    fixture = "datasets/fixtures/smoke_longmemeval.json"
    cfg = compose_run("dataset=longmemeval", f"dataset.path={fixture}", "limit.questions=2")
    cfg.dataset.sha256 = None
    limited = limit_dataset(load_dataset(cfg.dataset), cfg)
    assert sum(len(c.questions) for c in limited.conversations) == 2
    assert len(limited.conversations) == 2  # the third haystack is not ingested
