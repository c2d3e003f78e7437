"""Read the EverMemOS `eval_results.json` shape (LoCoMo; EverMemOS, Zep, MemOS, MemU, Mem0).

The shape, as published: a JSON object whose `detailed_results` maps
`locomo_exp_user_<i>` to a list of rows `{question_id: "locomo_<i>_qa<j>", question,
golden_answer, generated_answer, llm_judgments: {judgment_1: bool, ...}, category}`,
plus top-level `accuracy` and, in some files, `metadata` (`judge_model`,
`answer_model`, `num_runs`, per-run and per-category means). Every row must carry the
same judge runs; `metadata.num_runs`, when present, must agree. A file with no verdicts
whose `metadata.outcome` is an F1 rule (armbench's export of an offline arm) is scored by
that rule on import. Nothing is guessed: a row that does not fit is one error naming it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from bench.loaders.locomo_ids import NUMBER, locomo_row_position
from bench.published.model import PublishedError, PublishedFile, PublishedRow
from bench.published.read import load_json, need
from bench.scoring.rules import Outcome

_USER_KEY = re.compile(rf"locomo_exp_user_{NUMBER}")
_JUDGMENT = re.compile(rf"judgment_{NUMBER}")
_CATEGORY = re.compile(NUMBER)
_FIX = "pass an EverMemOS eval_results.json as published"


def read_evermemos(path: Path) -> PublishedFile:
    """The rows of an EverMemOS results file (raises PublishedError naming a bad row)."""
    data = load_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("detailed_results"), dict):
        raise PublishedError(f"{path}: no detailed_results object at the top level: {_FIX}")
    given = data.get("metadata")
    meta: dict[str, Any] = given if isinstance(given, dict) else {}
    rows: list[PublishedRow] = []
    runs: int | None = None
    for key, items in data["detailed_results"].items():
        user = _USER_KEY.fullmatch(key)
        if user is None or not isinstance(items, list):
            raise PublishedError(
                f"{path}: detailed_results.{key} is not locomo_exp_user_<i> with a list: {_FIX}"
            )
        for n, item in enumerate(items):
            row = _row(path, f"detailed_results.{key}[{n}]", item, int(user.group(1)))
            if runs is not None and len(row.verdicts) != runs:
                raise PublishedError(
                    f"{path}: {row.where} ({row.row}) has {len(row.verdicts)} judgments, "
                    f"earlier rows {runs}: every row must carry the same judge runs"
                )
            runs = len(row.verdicts)
            rows.append(row)
    declared = meta.get("num_runs")
    if isinstance(declared, int) and runs is not None and declared != runs:
        raise PublishedError(
            f"{path}: metadata.num_runs is {declared} but rows carry {runs} judgments: {_FIX}"
        )
    return PublishedFile(
        format="evermemos",
        rows=rows,
        judge_model=_text(meta.get("judge_model")),
        answer_model=_text(meta.get("answer_model")),
        runs=runs or 0,
        outcome_rule=_f1_rule(meta.get("outcome")) if not runs else None,
    )


def _f1_rule(value: Any) -> str | None:
    """`metadata.outcome` when it is an F1 rule (`f1>=0.5`), else None (verdicts decide)."""
    rule = Outcome.parse(value) if isinstance(value, str) else None
    return rule.name if rule is not None and rule.f1_threshold is not None else None


def _row(path: Path, where: str, item: Any, user: int) -> PublishedRow:
    """One row, its fields typed and its id's conversation equal to its group's."""
    if not isinstance(item, dict):
        raise PublishedError(f"{path}: {where} is not an object: {_FIX}")
    row_id = need(path, item, "question_id", str, where)
    position = locomo_row_position(row_id)
    if position is None or position[0] != user:
        raise PublishedError(
            f"{path}: {where} question_id {row_id!r} is not locomo_{user}_qa<j>: {_FIX}"
        )
    judgments = need(path, item, "llm_judgments", dict, where)
    verdicts = []
    for name, value in sorted(judgments.items(), key=lambda kv: _run_number(path, where, kv[0])):
        if not isinstance(value, bool):
            raise PublishedError(f"{path}: {where}.llm_judgments.{name} is not true or false")
        verdicts.append(value)
    category = item.get("category")
    if isinstance(category, bool) or not (
        isinstance(category, int) or (isinstance(category, str) and _CATEGORY.fullmatch(category))
    ):
        raise PublishedError(f"{path}: {where}.category {category!r} is not a category number")
    return PublishedRow(
        row=row_id,
        where=where,
        answer=need(path, item, "generated_answer", str, where),
        verdicts=tuple(verdicts),
        question=need(path, item, "question", str, where),
        category=int(category),
        gold=None if item.get("golden_answer") is None else str(item["golden_answer"]),
    )


def _run_number(path: Path, where: str, name: str) -> int:
    found = _JUDGMENT.fullmatch(name)
    if found is None:
        raise PublishedError(f"{path}: {where}.llm_judgments.{name} is not judgment_<k>: {_FIX}")
    return int(found.group(1))


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None
