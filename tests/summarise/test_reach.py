"""Reachability beside accuracy, and the caution every offline summary prints."""

from __future__ import annotations

from pathlib import Path

from bench.records import OK, ArmResult, QuestionRecord
from bench.scoring.reach import gold_token_recall
from bench.summarise.cautions import OFFLINE_CAUTION
from bench.summarise.reach import evidence_recall, reach_rows
from bench.summarise.render import render_text
from bench.summarise.summary import summarise_run

ROOT = Path(__file__).resolve().parents[2]


def test_gold_token_recall() -> None:
    """Share of the gold's content words found in the context (stemmed)."""
    assert gold_token_recall("a red ceramic bowl", "Alice made a ceramic bowl") == 2 / 3
    assert gold_token_recall("painting", "She paints landscapes") == 1.0
    assert gold_token_recall(None, "anything") is None


def test_evidence_recall_counts_evidence_ids_with_repeats() -> None:
    """|evidence ∩ retrieved| / |evidence|: one id is a membership test, the same ratio."""
    assert evidence_recall(["D1:1", "D1:2"], ["D1:2"]) == 1.0
    assert evidence_recall(["D1:1"], ["D1:2"]) == 0.0
    assert evidence_recall([], ["D1:2"]) == 0.0
    assert evidence_recall(["D1:1", "D2:1"], ["D1:1", "D1:1", "D3:1"]) == 2 / 3
    assert evidence_recall(["D1:1"], []) is None and evidence_recall(["D1:1"], None) is None


def _rec(qid: str, cat: int, evidence: list[str], res: ArmResult) -> QuestionRecord:
    return QuestionRecord(qid, "locomo", "c", cat, "q", "g", evidence, {"a": res})


def test_reach_rows() -> None:
    """Evidence recall over questions with evidence; gold-token recall from the scores."""
    hit = ArmResult(OK, "x", True, {"gold_token_recall": 1.0}, retrieved_ids=["D1:1"])
    miss = ArmResult(OK, "y", False, {"gold_token_recall": 0.5}, retrieved_ids=["D9:9"])
    records = [
        _rec("c:0", 1, ["D1:1", "D1:2"], hit),
        _rec("c:1", 4, ["D2:1"], miss),
        _rec("c:2", 5, ["D3:1"], hit),  # adversarial: no gold answer, not counted
    ]
    (row,) = reach_rows(records, ["a"], locomo_style=True)
    assert (row.accuracy.k, row.accuracy.n) == (1, 2)
    assert row.evidence_recall == 0.25 and row.gold_token_recall == 0.75


def test_arm_without_source_ids_has_no_evidence_recall() -> None:
    """An arm that reports no retrieved ids (the whole transcript) shows no evidence recall."""
    res = ArmResult(OK, "x", True, {"gold_token_recall": 1.0})
    (row,) = reach_rows([_rec("c:0", 1, ["D1:1"], res)], ["a"], locomo_style=True)
    assert row.evidence_recall is None and row.gold_token_recall == 1.0


def test_offline_summary_prints_the_caution() -> None:
    """The committed offline smoke run's summary carries the one-line caution."""
    text = render_text(summarise_run(ROOT / "results" / "smoke-offline-v0.1.0"))
    lines = [ln for ln in text.splitlines() if OFFLINE_CAUTION in ln]
    assert len(lines) == 1 and lines[0].startswith("> note: OFFLINE run")
    assert "33%" in OFFLINE_CAUTION
