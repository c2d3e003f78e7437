"""bench.report.explorer: the offline failure explorer written beside report.html."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from bench.records import OK, ArmResult, QuestionRecord
from bench.report import explorer
from bench.report import page as report
from bench.runmeta import DatasetMeta, RunMeta
from tests.report.test_frame import ARMS, N_QUESTIONS, make_run

SMOKE = Path(__file__).resolve().parents[2] / "datasets" / "fixtures" / "smoke_locomo.json"


def _blob(page: str) -> dict[str, Any]:
    match = re.search(r'<script type="application/json" id="data">(.*?)</script>', page, re.S)
    assert match is not None
    data: dict[str, Any] = json.loads(match.group(1))
    return data


def _record(**arms: ArmResult) -> QuestionRecord:
    return QuestionRecord(
        question_id="c:1",
        dataset="locomo",
        conversation_id="c",
        category=1,
        question="Where?",
        gold="Paris",
        evidence=["D1:2"],
        arms=dict(arms),
        corrected_gold="Lyon",
    )


@pytest.mark.slow
def test_report_writes_a_self_contained_explorer(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path)
    assert report.main([str(run_dir)]) == 0
    page = (run_dir / "explorer.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert not re.search(r"""<(script|link|img)[^>]*\b(src|href)=["']?https?:""", page)
    data = _blob(page)
    assert data["arms"] == list(ARMS)
    assert len(data["rows"]) == N_QUESTIONS
    assert {len(row[6]) for row in data["rows"]} == {len(ARMS)}


def test_record_text_cannot_close_the_script(tmp_path: Path) -> None:
    hostile = "</script><script>alert(1)</script>"
    rec = _record(raw=ArmResult(status=OK, answer=hostile, correct=False))
    data = explorer.explorer_data([rec], {})
    blob = json.dumps(data).replace("<", "\\u003c")
    assert "</script" not in blob and json.loads(blob) == data
    assert data["rows"][0][6][0][1] == hostile


def test_rows_carry_miss_ranks_context_and_errata_gold() -> None:
    rec = _record(
        rag=ArmResult(status=OK, answer="x", correct=False, retrieved_ids=["D1:5", "D1:2"]),
        mem=ArmResult(status=OK, answer="y", correct=False, retrieved_ids=["D1:9"]),
        raw=ArmResult(status=OK, answer="Paris", correct=True, context="Ann: in Paris"),
    )
    row = explorer.explorer_data([rec], {"c": {"D1:2": "Ann: in Paris"}})["rows"][0]
    qid, label, _, gold, corrected, evidence, arms, trap = row
    assert trap is None
    assert (qid, label, gold, corrected) == ("c:1", "multi-hop", "Paris", "Lyon")
    assert evidence == [["D1:2", "Ann: in Paris"]]
    rag, mem, raw = arms
    assert rag[5] == "reader" and rag[6] == [2]  # evidence retrieved at rank 2, answer wrong
    assert mem[5] == "retrieval" and mem[6] == [0]  # evidence never retrieved
    assert raw[5] is None and raw[6] is None and raw[7] == "Ann: in Paris"


def test_errata_gold_omitted_when_it_equals_the_gold() -> None:
    rec = _record(raw=ArmResult(status=OK, answer="Paris", correct=True))
    rec.corrected_gold = "Paris"
    assert explorer.explorer_data([rec], {})["rows"][0][4] is None


def test_evidence_turn_text_comes_from_the_run_dataset(tmp_path: Path) -> None:
    turns = explorer.evidence_turns(RunMeta(dataset=DatasetMeta(path=str(SMOKE))))
    assert turns["smoke-1"]["D1:1"].startswith("Alice: Hi Bob! I started pottery")
    assert explorer.evidence_turns(RunMeta(dataset=DatasetMeta(path=str(tmp_path / "no")))) == {}
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    assert explorer.evidence_turns(RunMeta(dataset=DatasetMeta(path=str(bad)))) == {}
    assert explorer.evidence_turns(None) == {}


@pytest.mark.parametrize("name", ["explorer.js", "explorer.css", "explorer_body.html"])
def test_assets_have_no_remote_references(name: str) -> None:
    text = (Path(explorer.__file__).with_name("explorer_assets") / name).read_text("utf-8")
    assert "http://" not in text and "https://" not in text


def test_adversarial_answer_is_the_trap_not_the_gold() -> None:
    rec = _record(raw=ArmResult(status=OK, answer="not mentioned", correct=True))
    rec.category, rec.gold, rec.adversarial_answer = 5, None, "blue"
    row = explorer.explorer_data([rec], {})["rows"][0]
    assert row[1] == "adversarial" and row[3] is None and row[7] == "blue"


def test_longmemeval_evidence_text_is_read_with_its_own_loader() -> None:
    """A LongMemEval run's explorer shows the has_answer turns' text (LoCoMo's loader
    cannot read that file, so the evidence used to be bare ids)."""
    path = SMOKE.with_name("smoke_longmemeval.json")
    meta = RunMeta(dataset=DatasetMeta(name="smoke_longmemeval", path=str(path)))
    turns = explorer.evidence_turns(meta)
    assert turns["smoke_ssu_1"]["answer_ssu_1:1"].startswith("user: ")
    by_config = RunMeta(
        dataset=DatasetMeta(name="mine", path=str(path)),
        config={"dataset": {"loader": "longmemeval"}},
    )
    assert explorer.evidence_turns(by_config) == turns
    as_locomo = RunMeta(dataset=DatasetMeta(name="locomo", path=str(path)))
    assert explorer.evidence_turns(as_locomo) == {}
