"""Known-wrong answers in the EverMemOS `eval_results.json` shape, matched to dataset questions.

The shape (EverMemOS, Zep, MemOS, MemU and Mem0 LoCoMo results are published in it):
`{"detailed_results": {"locomo_exp_user_<i>": [row, ...]}, ...}`, each row
`{question_id: "locomo_<i>_qa<j>", question, golden_answer, generated_answer,
llm_judgments: {judgment_1: bool, ...}, category}`. Row `locomo_<i>_qa<j>` is question
j (0-based, every category counted) of conversation i (0-based, file order) of
`locomo10.json`, i.e. the dataset's `<sample_id>:<j>`. A row is accepted only when the
question text (and category, when given) equals the dataset's; any mismatch is an
error naming the row, since a misaligned file would calibrate the wrong questions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.calibrate.sets import WRONG, AnswerSet, Item
from bench.errors import DatasetError
from bench.types import Dataset
from bench.untrusted import MAX_DATASET_BYTES, UntrustedJSONError, read_json

_USER = re.compile(r"^locomo_exp_user_(\d+)$")
_QID = re.compile(r"^locomo_(\d+)_qa(\d+)$")


@dataclass(frozen=True)
class AnswerFile:
    """A matched answer file: its set and the verdicts published with it."""

    answers: AnswerSet
    """The file's answers as a `wrong` set, in file order."""
    published: dict[str, list[bool]]
    """Question id -> the file's own `llm_judgments` (judgment_1, judgment_2, ...)."""


def _fail(path: Path, where: str, what: str) -> DatasetError:
    return DatasetError(
        f"{path}: {where}: {what}; pass a file in the EverMemOS eval_results.json shape "
        "for this dataset"
    )


def _row_item(path: Path, dataset: Dataset, user: int, row: Any) -> tuple[Item, list[bool]]:
    if not isinstance(row, dict):
        raise _fail(path, f"locomo_exp_user_{user}", "a row is not an object")
    qid = str(row.get("question_id", ""))
    match = _QID.match(qid)
    if not match or int(match.group(1)) != user:
        raise _fail(path, qid or "?", f"question_id is not locomo_{user}_qa<j>")
    j = int(match.group(2))
    convs = dataset.conversations
    questions = convs[user].questions if user < len(convs) else ()
    if j >= len(questions):
        raise _fail(path, qid, "no such question in the dataset")
    question = questions[j]
    if row.get("question") != question.question:
        raise _fail(path, qid, f"question text differs from {question.question_id}")
    category = row.get("category")
    if category is not None and str(category) != str(question.category):
        raise _fail(path, qid, f"category {category} differs from {question.question_id}")
    answer = row.get("generated_answer")
    if not isinstance(answer, str):
        raise _fail(path, qid, "generated_answer is not a string")
    judgments = row.get("llm_judgments") or {}
    published = [bool(judgments[k]) for k in sorted(judgments) if isinstance(judgments[k], bool)]
    return Item(question, answer), published


def read_answer_file(path: Path, dataset: Dataset) -> AnswerFile:
    """The file's rows as a `wrong` answer set matched to `dataset`; DatasetError when not."""
    try:
        data = read_json(path, limit=MAX_DATASET_BYTES, follow_symlinks=True)
    except UntrustedJSONError as exc:
        raise DatasetError(f"{path}: unreadable ({exc.what}); pass a readable JSON file") from None
    users = data.get("detailed_results") if isinstance(data, dict) else None
    if not isinstance(users, dict):
        raise _fail(path, "top level", "no detailed_results object")
    items: list[Item] = []
    published: dict[str, list[bool]] = {}
    for key, rows in users.items():
        match = _USER.match(str(key))
        if not match or not isinstance(rows, list):
            raise _fail(path, str(key), "expected locomo_exp_user_<i> holding a list")
        for row in rows:
            item, verdicts = _row_item(path, dataset, int(match.group(1)), row)
            items.append(item)
            published[item.question.question_id] = verdicts
    return AnswerFile(AnswerSet(path.stem, WRONG, tuple(items), str(path)), published)
