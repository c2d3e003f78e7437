"""`bench.published import`: read, match, build records, write; one summary line back."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

from bench.loaders.resolve import sha256_file
from bench.published.evermemos import read_evermemos
from bench.published.longmemeval import read_longmemeval
from bench.published.match import Source, imported_result, match_rows, unmatched_counts
from bench.published.model import PublishedError, PublishedFile
from bench.published.write import imported_meta, write_run
from bench.records import ArmResult, QuestionRecord
from bench.scoring.locomo import is_abstention_item, outcome_from_f1, score_answer
from bench.scoring.rules import threshold_from_outcome
from bench.types import Dataset, Question


@dataclass(frozen=True)
class ImportRequest:
    """Everything one import needs, from the command line."""

    file: Path
    """The published file."""
    format: str
    """`evermemos` or `longmemeval`."""
    out: Path
    """The run directory to create."""
    arm: str
    """The arm name the published system gets."""
    source_url: str | None = None
    """Where the file was published."""
    judge_model: str | None = None
    """The judge model, when the file does not name it."""
    judgement_logs: tuple[Path, ...] = ()
    """LongMemEval verdict logs, one per judge run."""


def read_published(request: ImportRequest) -> PublishedFile:
    """The parsed file in its format, its judge model settled (file, else the flag)."""
    if request.format == "evermemos":
        if request.judgement_logs:
            raise PublishedError("--judgements: only for --format longmemeval (logs of verdicts)")
        published = read_evermemos(request.file)
    else:
        published = read_longmemeval(request.file, list(request.judgement_logs))
    named, given = published.judge_model, request.judge_model
    if named and given and named != given:
        raise PublishedError(
            f"{request.file}: names judge model {named!r}, --judge-model says {given!r}: "
            "drop --judge-model (the file's own value is used)"
        )
    if published.runs and not (named or given):
        raise PublishedError(
            f"{request.file}: carries verdicts but names no judge model: pass --judge-model NAME"
        )
    if not named and given:
        published = replace(published, judge_model=given)
    return published


def import_published(request: ImportRequest, published: PublishedFile, dataset: Dataset) -> str:
    """Import the read file into `request.out`; return the one summary line."""
    if not published.rows:
        raise PublishedError(f"{request.file}: no rows to import")
    source = Source(
        format=published.format,
        file_sha256=sha256_file(request.file),
        file_name=request.file.name,
        source_url=request.source_url,
        judge_model=published.judge_model,
        answer_model=published.answer_model,
    )
    pairs = match_rows(published, dataset, request.file.name)
    records = [
        (q, _record(q, _scored(imported_result(row, source, published.judge_files), q,
                                published.outcome_rule), request, dataset))
        for row, q in pairs
    ]  # fmt: skip
    meta = imported_meta(request.out, request.arm, source, dataset, published.runs, len(records))
    write_run(request.out, records, meta)
    missing = unmatched_counts(dataset, {q.question_id for q, _ in records})
    other_gold = sum(row.gold is not None and row.gold != str(q.gold) for row, q in pairs)
    return summary_line(request, len(records), published.runs, missing, other_gold)


def _scored(result: ArmResult, question: Question, rule: str | None) -> ArmResult:
    """The imported result with its answer's official metrics (F1 beside the verdicts).

    Scored only when both the answer and the gold (or an abstention item) are there; a
    file without verdicts that names an F1 rule (`rule`) gets that rule's outcome.
    """
    if result.answer is None or (question.gold is None and not is_abstention_item(question)):
        return result
    scores = score_answer(result.answer, question)
    threshold = threshold_from_outcome(rule)
    if threshold is None or result.outcome is not None:
        return replace(result, scores=scores)
    correct = outcome_from_f1(scores, question, threshold)
    return replace(result, scores=scores, correct=correct, outcome=rule)


def _record(
    question: Question, result: ArmResult, request: ImportRequest, dataset: Dataset
) -> QuestionRecord:
    """The record of one question holding only the imported arm's result."""
    return QuestionRecord(
        question_id=question.question_id,
        dataset=dataset.name,
        conversation_id=question.conversation_id,
        category=question.category,
        question=question.question,
        gold=question.gold,
        evidence=list(question.evidence),
        arms={request.arm: result},
        adversarial_answer=question.adversarial_answer,
        question_type=question.question_type,
        provenance={"run": request.out.name, "dataset_sha256": dataset.sha256},
    )


def summary_line(
    request: ImportRequest, rows: int, runs: int, missing: Counter[int], other_gold: int
) -> str:
    """`imported N rows ...; not in the file: M dataset questions (category c: k, ...)`.

    `other_gold`: rows whose `golden_answer` is not the dataset's gold; their verdicts
    were judged against that key, which the line says (it is no reason to refuse).
    """
    parts = [
        f"imported {rows} rows of {request.file.name} as arm {request.arm} "
        f"({runs} judge run{'s' if runs != 1 else ''}) into {request.out}"
    ]
    if missing:
        by_cat = ", ".join(f"category {c}: {n}" for c, n in sorted(missing.items()))
        parts.append(f"not in the file: {sum(missing.values())} dataset questions ({by_cat})")
    if other_gold:
        parts.append(
            f"{other_gold} rows give a golden_answer other than the dataset's gold "
            "(their verdicts were judged against it)"
        )
    return "; ".join(parts)
