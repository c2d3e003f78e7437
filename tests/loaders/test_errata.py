"""Answer-key errata: loading and matching the audit, scoring against both keys, summary."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from bench.config import DatasetConfig
from bench.errors import ConfigError, DatasetError
from bench.judge.judges import with_corrected_judgements
from bench.loaders import load_dataset
from bench.loaders.errata import ERRATA_FILENAME, ERRATA_SHA256, errata_file
from bench.loaders.resolve import PROJECT_ROOT
from bench.records import OK, ArmResult, Judgement, QuestionRecord
from bench.scoring.errata import with_corrected_scores
from bench.summarise.errata import errata_view
from bench.summarise.load import LoadedRun, SummaryError
from bench.summarise.render import render_text
from bench.summarise.render_json import summary_to_json
from bench.summarise.stats import Rate
from bench.summarise.summary import summarise_records
from bench.types import Correction, Question
from tests.support.e2e_support import load_records, run_cli

SMOKE = "datasets/fixtures/smoke_locomo.json"
DATA_DIR = Path(os.environ.get("BENCH_DATA_DIR", "/nonexistent"))
HAVE_LOCOMO = (DATA_DIR / "locomo10.json").is_file() and (DATA_DIR / ERRATA_FILENAME).is_file()


def _smoke_errata(tmp_path: Path, question: str = "How many kids does Bob have?") -> Path:
    """An audit of the smoke fixture: qa1 gets a new gold, qa0 new evidence only."""
    entries = [
        {
            "question_id": "locomo_0_qa1",
            "question": question,
            "category": 4,
            "error_type": "HALLUCINATION",
            "golden_answer": "3",
            "correct_answer": "two",
            "correct_evidence": ["D1:2"],
        },
        {
            "question_id": "locomo_0_qa0",
            "question": "When did Alice start pottery classes?",
            "category": 2,
            "error_type": "WRONG_CITATION",
            "golden_answer": "7 May 2023",
            "correct_answer": "7 May 2023 (citation is wrong)",
            "correct_evidence": ["D1:3; D1:4"],
        },
    ]
    path = tmp_path / "errata.json"
    path.write_text(json.dumps(entries))
    return path


def _smoke(errata: Path | None) -> Any:
    cfg = DatasetConfig(name="smoke", path=SMOKE, errata=str(errata) if errata else None)
    return load_dataset(cfg)


def test_errata_attach_to_the_matching_questions(tmp_path: Path) -> None:
    """Ids map by position; a citation-only entry keeps the official gold."""
    ds = _smoke(_smoke_errata(tmp_path))
    assert ds.errata is not None and (ds.errata.entries, ds.errata.score_affected) == (2, 1)
    q0, q1 = ds.conversations[0].questions[:2]
    assert q1.correction == Correction("locomo_0_qa1", "HALLUCINATION", "two", ("D1:2",))
    assert q0.correction is not None and q0.correction.gold == q0.gold == "7 May 2023"
    assert q0.correction.evidence == ("D1:3", "D1:4") and not q0.correction.score_affected
    assert all(q.correction is None for q in ds.questions()[2:])


def test_errata_off_by_default_for_smoke(tmp_path: Path) -> None:
    """Without `dataset.errata` nothing is attached."""
    ds = _smoke(None)
    assert ds.errata is None and all(q.correction is None for q in ds.questions())


def test_errata_question_text_must_match(tmp_path: Path) -> None:
    """An entry whose question text differs names the entry and the way out."""
    with pytest.raises(DatasetError, match=r"locomo_0_qa1: maps to .*dataset.errata=null"):
        _smoke(_smoke_errata(tmp_path, question="How many cats does Bob have?"))


def test_errata_entry_outside_the_dataset(tmp_path: Path) -> None:
    """An id beyond the loaded conversations is an error, not silently skipped."""
    path = tmp_path / "e.json"
    entry = {
        "question_id": "locomo_7_qa0",
        "question": "x?",
        "category": 1,
        "error_type": "AMBIGUOUS",
        "correct_answer": "y",
        "correct_evidence": [],
    }
    path.write_text(json.dumps([entry]))
    with pytest.raises(DatasetError, match="no conversation 7"):
        _smoke(path)


def test_errata_auto_checks_the_checksum(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """`auto` refuses a file with another SHA-256: a warning, and the official key only.

    An explicit path with the same bad file is an error (the user asked for it).
    """
    (tmp_path / ERRATA_FILENAME).write_text("[]")
    monkeypatch.setenv("BENCH_DATA_DIR", str(tmp_path))
    assert errata_file("auto", "locomo") is None
    assert f"expected {ERRATA_SHA256}" in caplog.text and "official key only" in caplog.text
    bad = tmp_path / "bad.json"
    bad.write_text("[]")
    assert errata_file(str(bad), "locomo") == bad  # a path is used as given, hash recorded


def test_errata_refused_for_other_loaders() -> None:
    """The audit is LoCoMo's; asking for it on LongMemEval is a config error."""
    with pytest.raises(ConfigError, match="LoCoMo only"):
        errata_file("auto", "longmemeval")
    assert errata_file(None, "longmemeval") is None


def test_locomo_yaml_turns_errata_on() -> None:
    """The LoCoMo config applies the audit by default; the others do not."""
    for name, expected in (("locomo", "auto"), ("smoke", None), ("longmemeval", None)):
        data = yaml.safe_load((PROJECT_ROOT / "conf" / "dataset" / f"{name}.yaml").read_text())
        assert data["errata"] == expected


@pytest.mark.skipif(not HAVE_LOCOMO, reason="LoCoMo and the audit not in $BENCH_DATA_DIR")
def test_full_audit_matches_locomo() -> None:
    """All 156 entries match LoCoMo's questions; 99 change the score, as published."""
    cfg = DatasetConfig(**yaml.safe_load((PROJECT_ROOT / "conf/dataset/locomo.yaml").read_text()))
    ds = load_dataset(cfg)
    assert ds.errata is not None
    assert (ds.errata.entries, ds.errata.score_affected, ds.errata.sha256) == (
        156,
        99,
        ERRATA_SHA256,
    )
    fixed = [q for q in ds.questions() if q.correction]
    assert len(fixed) == 156 and all(q.category in (1, 2, 3, 4) for q in fixed)


def _question(gold: str, fixed: str, kind: str = "HALLUCINATION") -> Question:
    fix = Correction("a", kind, fixed, ())
    return Question("c:0", "c", "How many kids?", 4, gold, ("D1:1",), correction=fix)


def test_corrected_f1_recomputed() -> None:
    """An answer matching the corrected gold is right under that key only."""
    q = _question("3", "two")
    res = ArmResult(status=OK, answer="two", correct=False, scores={"f1": 0.0})
    out = with_corrected_scores(res, q, 0.5)
    assert out.correct is False and out.correct_corrected is True
    assert out.scores["f1_corrected"] == 1.0 and out.scores["f1"] == 0.0
    citation = with_corrected_scores(res, _question("3", "3", "WRONG_CITATION"), 0.5)
    assert citation.correct_corrected is None and "f1_corrected" not in citation.scores


class _Judge:
    """A judge that says yes iff the gold it is shown appears in the answer."""

    judge_id, model, prompt_hash = "llm", "m", "h"

    def __init__(self) -> None:
        self.seen: list[str | None] = []

    def judge(self, question: Question, answer: str) -> Judgement:
        self.seen.append(question.gold)
        verdict = bool(question.gold) and str(question.gold) in answer
        return Judgement("llm", "ok", verdict, self.model, self.prompt_hash)


def test_judge_asked_again_with_corrected_gold_only_when_affected() -> None:
    """Affected questions get a second verdict on the corrected gold; others none."""
    judge = _Judge()
    res = ArmResult(status=OK, answer="two kids", correct=False)
    out = with_corrected_judgements(res, _question("3", "two"), (judge,), "llm", False)
    assert judge.seen == ["two"] and out.correct_corrected is True
    again = with_corrected_judgements(out, _question("3", "two"), (judge,), "llm", False)
    assert judge.seen == ["two"] and again.corrected_judgements == out.corrected_judgements
    plain = Question("c:1", "c", "q", 4, "3")
    assert with_corrected_judgements(res, plain, (judge,), "llm", False) is res


def _record(qid: str, cat: int, errata: str | None, correct: bool, fixed: bool | None) -> Any:
    res = ArmResult(
        status=OK, answer="a", correct=correct, correct_corrected=fixed, scores={"f1": 0.0}
    )
    return QuestionRecord(
        qid,
        "locomo",
        "c",
        cat,
        "q",
        "g",
        [],
        {"raw": res},
        errata_type=errata,
        corrected_gold="g2" if errata else None,
        corrected_evidence=[] if errata else None,
    )


def test_errata_view_counts_and_ceiling() -> None:
    """Affected count per category, ceiling (n - affected)/n, corrected accuracy."""
    records = [
        _record("c:0", 1, "HALLUCINATION", False, True),
        _record("c:1", 1, "WRONG_CITATION", True, None),
        _record("c:2", 1, None, True, None),
        _record("c:3", 2, None, False, None),
        _record("c:4", 5, None, True, None),
    ]
    view = errata_view(records, ["raw"])
    assert view is not None
    assert view.score_affected == {"1": 1, "2": 0} and view.citation_only == {"1": 1, "2": 0}
    assert view.ceiling == {"1": 2 / 3, "2": 1.0, "scored": 3 / 4}
    arm = view.arms["raw"]
    assert (arm.official.accuracy.k, arm.official.accuracy.n) == (2, 4)
    assert (arm.corrected.accuracy.k, arm.corrected.accuracy.n) == (3, 4)
    summary = summarise_records(LoadedRun(Path("r"), None, records))
    assert "Ceiling under the official key (categories 1–4): 75.0%" in render_text(summary)
    assert summary_to_json(summary)["errata"]["score_affected"] == 1
    assert errata_view([_record("c:9", 1, None, True, None)], ["raw"]) is None


def test_a_corrected_outcome_that_is_not_a_boolean_is_refused(tmp_path: Path) -> None:
    """`correct_corrected: "yes"` on disk is refused by the reader, naming the field."""
    from bench.records import write_record
    from bench.summarise import load_run

    write_record(tmp_path, "c0", _record("c:0", 1, "HALLUCINATION", False, "yes"))  # type: ignore[arg-type]
    write_record(tmp_path, "c1", _record("c:1", 1, None, True, None))
    with pytest.raises(SummaryError, match=r"correct_corrected"):
        summarise_records(load_run(tmp_path))


def test_both_keys_join_unlisted_and_listed_questions() -> None:
    """Unlisted questions count once for both keys; listed ones under each key's own terms."""

    def rec(
        i: int,
        errata: str | None,
        evidence: list[str],
        fixed_evidence: list[str] | None,
        correct: bool,
        fixed: bool | None,
        f1: float,
        f1_fixed: float | None,
    ) -> QuestionRecord:
        scores = {"f1": f1} if f1_fixed is None else {"f1": f1, "f1_corrected": f1_fixed}
        res = ArmResult(
            status=OK,
            answer="a",
            correct=correct,
            correct_corrected=fixed,
            scores=scores,
            retrieved_ids=["D1", "D2"],
        )
        return QuestionRecord(
            f"c:{i}",
            "locomo",
            "c",
            1 + i % 2,
            "q",
            "g",
            evidence,
            {"raw": res},
            errata_type=errata,
            corrected_evidence=fixed_evidence,
        )

    records = [
        rec(0, None, ["D1"], None, True, None, 0.8, None),
        rec(1, None, ["D3"], None, False, None, 0.1, None),
        rec(2, "WRONG_CITATION", ["D3"], ["D2"], True, None, 0.9, None),
        rec(3, "HALLUCINATION", ["D1", "D4"], ["D4"], False, True, 0.2, 0.7),
    ]
    summary = summarise_records(LoadedRun(Path("r"), None, records))
    assert summary.errata is not None and summary.errata == errata_view(records, ["raw"])
    arm = summary.errata.arms["raw"]
    official, corrected = arm.official, arm.corrected
    assert (official.accuracy.k, official.accuracy.n, corrected.accuracy.k) == (2, 4, 3)
    assert official.f1 == pytest.approx((0.8 + 0.1 + 0.9 + 0.2) / 4)
    assert corrected.f1 == pytest.approx((0.8 + 0.1 + 0.9 + 0.7) / 4)
    assert official.evidence_recall == pytest.approx((1 + 0 + 0 + 0.5) / 4)
    assert corrected.evidence_recall == pytest.approx((1 + 0 + 1 + 0) / 4)
    assert arm.groups_official == {"1": Rate(2, 2), "2": Rate(0, 2)}
    assert arm.groups_corrected == {"1": Rate(2, 2), "2": Rate(1, 2)}


def test_run_records_carry_both_keys(tmp_path: Path) -> None:
    """End to end on the smoke fixture: records hold the audit; the summary shows both views."""
    out = tmp_path / "run"
    errata = _smoke_errata(tmp_path)
    proc = run_cli(
        "dataset=smoke", "arms=[raw]", f"dataset.errata={errata}", f"out={out}", "progress=false"
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    records = load_records(out)
    q1 = records["smoke-1:1"]
    assert (q1["errata_type"], q1["corrected_gold"]) == ("HALLUCINATION", "two")
    assert isinstance(q1["arms"]["raw"]["correct_corrected"], bool)
    assert "f1_corrected" in q1["arms"]["raw"]["scores"]
    assert "correct_corrected" not in records["smoke-1:0"]["arms"]["raw"]  # citation only
    run_json = json.loads((out / "run.json").read_text())
    assert run_json["dataset"]["errata_sha256"] and run_json["identity"]["errata_sha256"]
    shown = run_cli(str(out), module="bench.summarise")
    assert "score-affected" in shown.stdout and "acc corrected" in shown.stdout


def test_judge_rescores_affected_questions_through_the_fault_server(tmp_path: Path) -> None:
    """Over real HTTP: the judge is asked again (corrected gold) on affected questions only."""
    from tests.run.test_fault_e2e import ENV, smoke_overrides
    from tests.support.fault_server import FaultServer

    errata = _smoke_errata(tmp_path)
    out = tmp_path / "judged"
    with FaultServer() as server:
        extra = ("arms=[raw]", f"dataset.errata={errata}", "scoring.primary_judge=llm")
        proc = run_cli(*smoke_overrides(server.base_url, out, *extra), env=ENV)
    assert proc.returncode == 0, proc.stderr[-2000:]
    records = load_records(out)
    affected = records["smoke-1:1"]["arms"]["raw"]
    assert affected["corrected_judgements"]["llm"]["status"] == "ok"
    assert affected["correct_corrected"] == affected["corrected_judgements"]["llm"]["verdict"]
    others = [r["arms"]["raw"] for q, r in records.items() if q != "smoke-1:1"]
    assert others and all("corrected_judgements" not in r for r in others)


def test_auto_errata_skip_a_file_that_is_not_the_canonical_locomo(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A LoCoMo-format subset or custom file under `errata=auto`: a warning, no audit."""
    cfg = DatasetConfig(
        name="locomo",
        loader="locomo",
        path=str(PROJECT_ROOT / "datasets" / "fixtures" / "smoke_locomo.json"),
        sha256="0" * 64,  # the canonical checksum, which this file does not have
        errata="auto",
    )
    dataset = load_dataset(cfg)
    assert dataset.errata is None
    assert "not the canonical LoCoMo file" in caplog.text
