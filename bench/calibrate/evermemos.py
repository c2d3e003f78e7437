"""Known-wrong answers in the EverMemOS `eval_results.json` shape, matched to dataset questions.

The shape (EverMemOS, Zep, MemOS, MemU and Mem0 LoCoMo results are published in it) is
read by the one reader of published verdicts, `bench.published.evermemos.read_evermemos`,
and matched by `bench.published.match.match_rows`, so `calibrate.answers=FILE` refuses
exactly what `python -m bench.published` import refuses, each in one line naming the row:
a verdict that is not `true` or `false` (`"yes"`, `1`, `null`, a list), two rows naming
one question, rows with different numbers of judgments or `metadata.num_runs`
disagreeing with them, an id that names no question, a question text or category that
differs from the dataset's (a misaligned file would calibrate the wrong questions).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bench.calibrate.sets import WRONG, AnswerSet, Item
from bench.published.evermemos import read_evermemos
from bench.published.match import match_rows
from bench.types import Dataset


@dataclass(frozen=True)
class AnswerFile:
    """A matched answer file: its set and the verdicts published with it."""

    answers: AnswerSet
    """The file's answers as a `wrong` set, in dataset order."""
    published: dict[str, list[bool]]
    """Question id -> the file's own `llm_judgments` (judgment_1, judgment_2, ...)."""


def read_answer_file(path: Path, dataset: Dataset) -> AnswerFile:
    """The file's rows as a `wrong` answer set matched to `dataset`; PublishedError when not."""
    matched = match_rows(read_evermemos(path), dataset, str(path))
    items = tuple(Item(question, row.answer) for row, question in matched)
    published = {question.question_id: list(row.verdicts) for row, question in matched}
    return AnswerFile(AnswerSet(path.stem, WRONG, items, str(path)), published)
