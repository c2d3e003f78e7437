"""The summary's BEAM section (`bench.summarise.beam_view`): aggregation as BEAM reports it."""

from __future__ import annotations

from typing import Any

import pytest

from bench.records import ArmResult, Judgement, QuestionRecord
from bench.summarise.beam_view import beam_section
from bench.summarise.judge_views import judge_sections


def _record(
    conv: str, ability: str, i: int, offline: dict[str, Any], **judged: Any
) -> QuestionRecord:
    judgements = {
        jid: Judgement(jid, "ok", scores=scores) for jid, scores in judged.items() if scores
    }
    arm = ArmResult(status="ok", answer="a", scores=offline, judgements=judgements)
    return QuestionRecord(
        f"{conv}:{ability}:{i}",
        "beam",
        conv,
        1,
        "q?",
        "g",
        [],
        {"rag": arm},
        question_type=ability,
        rubric=["an item"],
        difficulty="easy",
    )


def _records() -> list[QuestionRecord]:
    ku = "knowledge_update"
    reach = "rubric_reach_offline"
    eo = "event_ordering"
    return [
        # conversation 1: two knowledge-update questions, conversation 2: one
        _record("c1", ku, 0, {reach: 1.0}, beam={"rubric": 0.0, "rubric_kept": 0.5}),
        _record("c1", ku, 1, {reach: 0.0}, beam={"rubric": 1.0, "rubric_kept": 1.0}),
        _record("c2", ku, 0, {reach: 1.0}, beam={"rubric": 0.0, "rubric_kept": 0.0}),
        # event ordering: two runs on one question (mean of runs), an undefined tau on another
        _record(
            "c1",
            eo,
            0,
            {"rubric_reach_offline": 0.5, "event_order_tau_b_offline": 0.0},
            **{
                "beam#1": {
                    "rubric": 0.5,
                    "rubric_kept": 0.5,
                    "event_order_tau_b": 1.0,
                    "event_order_score": 1.0,
                },
                "beam#2": {
                    "rubric": 1.0,
                    "rubric_kept": 1.0,
                    "event_order_tau_b": 0.0,
                    "event_order_score": 0.5,
                },
            },
        ),
        _record(
            "c2",
            eo,
            0,
            {"rubric_reach_offline": 1.0, "event_order_tau_b_offline": None},
            **{
                "beam#1": {
                    "rubric": 0.0,
                    "rubric_kept": 0.0,
                    "event_order_tau_b": None,
                    "event_order_score": None,
                }
            },
        ),
    ]


def test_figures_are_averaged_per_conversation_then_over_conversations() -> None:
    lines, data = beam_section(_records(), ["rag"])
    offline = data["offline"]["rag"]
    # knowledge update reach: c1 mean 0.5, c2 1.0 -> 0.75 (the plain mean would be 0.667)
    assert offline["knowledge_update"]["reach"] == pytest.approx(0.75)
    assert offline["event_ordering"]["tau_norm_offline"] == pytest.approx(0.5)
    assert offline["event_ordering"]["undefined"] == {"tau_norm_offline": 1}
    judged = data["judge:beam"]["rag"]
    assert judged["knowledge_update"]["rubric"] == pytest.approx(0.25)  # (0.5 + 0) / 2
    assert judged["knowledge_update"]["kept"] == pytest.approx(0.375)  # (0.75 + 0) / 2
    assert judged["knowledge_update"]["upstream"] == pytest.approx(0.25)
    # event ordering: upstream reports tau_norm; run mean of (1+1)/2 and (0+1)/2 = 0.75
    assert judged["event_ordering"]["upstream"] == pytest.approx(0.75)
    assert judged["event_ordering"]["tau_norm"] == pytest.approx(0.75)
    assert judged["event_ordering"]["eo_score"] == pytest.approx(0.75)
    assert judged["event_ordering"]["rubric"] == pytest.approx((0.75 + 0.0) / 2)
    assert judged["event_ordering"]["undefined"] == {"tau_norm": 1, "eo_score": 1, "upstream": 1}
    text = "\n".join(lines)
    assert "## BEAM per ability" in text and "Judge `beam`" in text
    offline_all, judged_all = [line for line in lines if line.startswith("| all ")]
    assert offline_all.startswith("| all (mean of 2 abilities) | rag | 5 | 0.750 |")  # reach
    # upstream: (0.25 + 0.75) / 2; rubric 0.5->0: (0.25 + 0.375) / 2; kept: (0.375 + 0.375) / 2
    assert judged_all.startswith("| all (mean of 2 abilities) | rag | 5 | 0.500 | 0.312 | 0.375 |")


def test_the_hook_shows_beam_and_not_longmemeval_metrics(tmp_path: Any) -> None:
    lines, data = judge_sections(tmp_path, _records(), ["rag"], None, "f1>=0.5", False)
    assert "beam" in data and "longmemeval" not in data
    assert not any("LongMemEval" in line for line in lines)


def test_records_without_beam_scores_have_no_section() -> None:
    plain = ArmResult(status="ok", answer="a", scores={"f1": 1.0})
    record = QuestionRecord("c:0", "locomo", "c", 1, "q?", "g", [], {"rag": plain})
    assert beam_section([record], ["rag"]) == ([], {})
    assert "rubric" not in record.to_json() and "difficulty" not in record.to_json()
