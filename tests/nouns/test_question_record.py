"""bench.question_record: the one Question -> QuestionRecord builder (runs and imports)."""

from __future__ import annotations

from pathlib import Path

from bench.published.importing import ImportRequest, import_published
from bench.published.model import PublishedFile, PublishedRow
from bench.question_record import question_record
from bench.records import OK, ArmResult, read_record
from bench.types import Conversation, Correction, Dataset, Question

QUESTION = Question(
    question_id="c1:0",
    conversation_id="c1",
    question="Which city did Ilse move to?",
    category=1,
    gold="Lyon",
    evidence=("D1:3",),
    correction=Correction("a1", "wrong gold", "Lille", ("D1:4",)),
    rubric=("names Lille",),
    difficulty="easy",
)


def test_the_record_carries_every_question_field() -> None:
    record = question_record(QUESTION, "tiny", {"raw": ArmResult(status=OK)}, {"run": "r"})
    assert (record.question_id, record.dataset, record.gold) == ("c1:0", "tiny", "Lyon")
    assert (record.rubric, record.difficulty) == (["names Lille"], "easy")
    assert (record.errata_type, record.corrected_gold, record.corrected_evidence) == (
        "wrong gold",
        "Lille",
        ["D1:4"],
    )
    plain = question_record(Question("c1:1", "c1", "q", 2, "x"), "tiny", {}, {})
    assert (plain.rubric, plain.difficulty, plain.errata_type, plain.corrected_gold) == (
        None,
        None,
        None,
        None,
    )


def test_an_imported_record_keeps_rubric_difficulty_and_errata(tmp_path: Path) -> None:
    """The importer used to build its own record and drop these fields."""
    dataset = Dataset(
        "tiny", "tiny.json", "ab" * 32, (Conversation("c1", ("A", "B"), (), (QUESTION,)),)
    )
    row = PublishedRow(row="c1:0", where="line 1", answer="Lille", verdicts=(True,))
    published = PublishedFile(format="longmemeval", rows=[row], runs=1)
    out = tmp_path / "imp"
    request = ImportRequest(file=tmp_path / "log.jsonl", format="longmemeval", out=out, arm="pub")
    request.file.write_text("{}\n", encoding="utf-8")
    import_published(request, published, dataset)
    (path,) = sorted((out / "questions").rglob("*.json"))
    record = read_record(path)
    assert (record.rubric, record.difficulty, record.corrected_gold) == (
        ["names Lille"],
        "easy",
        "Lille",
    )
    assert record.arms["pub"].answer == "Lille"
