"""Match published rows to a dataset's questions, checked, and build imported results.

Identity is checked, never assumed. An EverMemOS row `locomo_<i>_qa<j>` names question
j (0-based, in file order, every category counted) of conversation i of `locomo10.json`,
which armbench calls `<sample_id>:<j>`; its question text must equal the dataset's after
stripping leading and trailing white space (the rule the answer-key audit is matched by,
`bench.loaders.errata`; the published files checked so far match exactly) and its
category must be the dataset's. A LongMemEval row's id is the dataset's id. A row that
names no question, repeats one, or disagrees is one PublishedError naming the row.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from bench.loaders.locomo_ids import locomo_row_position
from bench.published.model import (
    PublishedError,
    PublishedFile,
    PublishedRow,
    judge_base,
    judge_run_id,
)
from bench.records import OK, ArmResult, Imported, Judgement
from bench.scoring.rules import Outcome, majority
from bench.types import Dataset, Question


@dataclass(frozen=True)
class Source:
    """What every imported result records of its file (`bench.records.Imported`)."""

    format: str
    """The format read."""
    file_sha256: str
    """SHA-256 of the file."""
    file_name: str
    """The file's base name."""
    source_url: str | None
    """Where it was published, when given."""
    judge_model: str | None
    """The judge model of its verdicts (None when the file has none)."""
    answer_model: str | None
    """The answering model the file names."""


def match_rows(
    published: PublishedFile, dataset: Dataset, file_name: str
) -> list[tuple[PublishedRow, Question]]:
    """Each row with the dataset question it names, in dataset order."""
    found: dict[str, tuple[PublishedRow, Question]] = {}
    by_id = {q.question_id: q for q in dataset.questions()}
    for row in published.rows:
        question = _question(row, published.format, dataset, by_id, file_name)
        if question.question_id in found:
            raise PublishedError(
                f"{file_name}: {row.where} ({row.row}) names {question.question_id}, "
                f"as {found[question.question_id][0].where} does: one row per question"
            )
        _check_text(row, question, file_name, dataset.path)
        found[question.question_id] = (row, question)
    order = {q.question_id: n for n, q in enumerate(dataset.questions())}
    return sorted(found.values(), key=lambda pair: order[pair[1].question_id])


def _question(
    row: PublishedRow, fmt: str, dataset: Dataset, by_id: dict[str, Question], file_name: str
) -> Question:
    """The question a row names; PublishedError when it names none."""
    if fmt == "evermemos":
        at = locomo_row_position(row.row)
        convs = dataset.conversations
        if at is not None and at[0] < len(convs) and at[1] < len(convs[at[0]].questions):
            return convs[at[0]].questions[at[1]]
    elif row.row in by_id:
        return by_id[row.row]
    raise PublishedError(
        f"{file_name}: {row.where} ({row.row}) names no question of {dataset.path}: "
        "pass the dataset file the results were made on (--dataset PATH)"
    )


def _check_text(row: PublishedRow, question: Question, file_name: str, data: str) -> None:
    """The row's question text and category must be the dataset's."""
    if row.question is not None and row.question.strip() != question.question.strip():
        raise PublishedError(
            f"{file_name}: {row.where} ({row.row}) asks {row.question.strip()[:60]!r} but "
            f"{question.question_id} in {data} asks {question.question.strip()[:60]!r}: "
            "the results are for another dataset file (pass it with --dataset PATH)"
        )
    if row.category is not None and row.category != question.category:
        raise PublishedError(
            f"{file_name}: {row.where} ({row.row}) has category {row.category} but "
            f"{question.question_id} has {question.category} in {data}: "
            "the results are for another dataset file (pass it with --dataset PATH)"
        )


def imported_result(row: PublishedRow, source: Source, judge_files: list[str]) -> ArmResult:
    """The arm result of one row: its answer, one judgement per judge run, the majority.

    `correct` is the majority of the runs (`bench.scoring.rules.majority`): with three
    runs of one judge it is what the publishers report as majority-vote accuracy, and
    it is one binary outcome per question, which is what the paired tests need (a mean
    over runs is no per-question outcome). The per-run figures stay in the judgements.
    """
    judgements: dict[str, Judgement] = {}
    outcome = None
    if row.verdicts:
        model = source.judge_model or ""
        for k, verdict in enumerate(row.verdicts, 1):
            jid = judge_run_id(model, k)
            judgements[jid] = Judgement(judge_id=jid, status=OK, verdict=verdict, model=model)
        outcome = Outcome(majority_of=judge_base(model)).name
    return ArmResult(
        status=OK,
        answer=row.answer,
        correct=majority(list(row.verdicts)),
        context_tokens=None,
        outcome=outcome,
        answerer=source.answer_model,
        judgements=judgements,
        imported=Imported(
            format=source.format,
            file_sha256=source.file_sha256,
            file_name=source.file_name,
            row=row.row,
            source_url=source.source_url,
            judge_files=list(judge_files),
        ),
    )


def unmatched_counts(dataset: Dataset, matched: set[str]) -> Counter[int]:
    """Category -> dataset questions the file has no row for (reported, never imported)."""
    return Counter(q.category for q in dataset.questions() if q.question_id not in matched)
