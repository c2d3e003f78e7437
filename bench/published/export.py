"""`bench.published export`: one arm's answers in a published shape, for upstream graders.

    python -m bench.published export RUN_DIR --format longmemeval|evermemos --arm NAME --out FILE
        [--dataset PATH]

- `longmemeval`: JSON Lines `{question_id, hypothesis}`, one line per answered question,
  the input LongMemEval's `evaluate_qa.py` grades.
- `evermemos`: the `eval_results.json` shape (LoCoMo categories 1–4, as published):
  `detailed_results` keyed `locomo_exp_user_<i>`, rows `{question_id: locomo_<i>_qa<j>,
  question, golden_answer, generated_answer, llm_judgments, category}`, where i is the
  conversation's index in the dataset file (`--dataset`, else the standard resolver;
  its question text must be the record's) and j the question's (its id `<conv>:<j>`);
  `llm_judgments` holds the arm's repeated judge runs (`<id>#1..#R`) as
  `judgment_1..R` when it has them, else its outcome judge's verdict (`judge:<id>`) as
  `judgment_1`, else nothing (no verdict is invented), with top-level `total_questions`,
  `correct` and `accuracy` of the arm's `correct` and `metadata` naming the answer and
  judge models, the number of judge runs and the arm's `outcome` rule (an F1 rule is
  applied again on import, so export then import keeps every outcome).

Only `ok` results are written; the summary line counts the rest. `--out` must be a new
file outside every run directory (`check_out`): nothing is overwritten. Export then import
gives back the same answers under the same ids (tests/published/test_published.py).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from bench.files import write_text_atomic
from bench.loaders.locomo_ids import locomo_row_id
from bench.published.model import PublishedError
from bench.records import OK, ArmResult, QuestionRecord, iter_records
from bench.scoring.rules import Outcome
from bench.types import Dataset

_RUN = re.compile(r"(.+)#(\d+)")


def check_out(out: Path) -> None:
    """PublishedError when `out` exists or lies inside a run directory.

    Export writes a new file only: it never replaces a file (a record, a dataset, a
    published file), and never adds one to a run directory (a folder holding
    `run.json`), where `bench.verify` would count it as a result the run never wrote.
    """
    if out.exists() or out.is_symlink():
        raise PublishedError(f"--out {out}: already exists: give a new file name")
    for folder in out.absolute().parents:
        if (folder / "run.json").is_file():
            raise PublishedError(
                f"--out {out}: inside run directory {folder}: write it outside the run"
            )


def export_run(run_dir: Path, fmt: str, arm: str, out: Path, dataset: Dataset | None = None) -> str:
    """Write `out`; return the one summary line (`dataset`: needed for `evermemos`)."""
    check_out(out)
    if not (run_dir / "questions").is_dir():
        raise PublishedError(f"{run_dir}: no questions/ folder: pass a run directory")
    records = iter_records(run_dir)
    answered = [r for r in records if arm in r.arms and r.arms[arm].status == OK]
    if not answered:
        known = sorted({a for r in records for a in r.arms})
        raise PublishedError(
            f"{run_dir}: no ok result of arm {arm}: pass one of {', '.join(known) or 'none'}"
        )
    if fmt == "longmemeval":
        lines = [
            json.dumps({"question_id": r.question_id, "hypothesis": r.arms[arm].answer or ""})
            for r in answered
        ]
        write_text_atomic(out, "\n".join(lines) + "\n")
        written = len(lines)
    else:
        assert dataset is not None, "evermemos export needs the dataset"
        written = _write_evermemos(answered, arm, out, dataset)
    skipped = len(records) - written
    return f"wrote {written} answers of arm {arm} to {out} ({fmt}); not written: {skipped}"


def _write_evermemos(records: list[QuestionRecord], arm: str, out: Path, dataset: Dataset) -> int:
    """The EverMemOS shape of the scored (category 1–4) questions; returns rows written."""
    where = _positions(dataset)
    groups: dict[str, list[dict[str, Any]]] = {}
    correct = total = 0
    answerers, judges, runs, rules = set(), set(), set(), set()
    for record in records:
        if record.category not in (1, 2, 3, 4):
            continue
        at = where.get(record.question_id)
        if at is None or at[2].strip() != record.question.strip():
            raise PublishedError(
                f"question {record.question_id}: not in {dataset.path} with this text: "
                "pass the run's dataset file (--dataset PATH)"
            )
        result = record.arms[arm]
        judgments, judge = _judgments(result)
        groups.setdefault(f"locomo_exp_user_{at[0]}", []).append(
            {
                "question_id": locomo_row_id(at[0], at[1]),
                "question": record.question,
                "golden_answer": record.gold,
                "generated_answer": result.answer or "",
                "llm_judgments": judgments,
                "category": str(record.category),
            }
        )
        total += 1
        correct += result.correct is True
        answerers.add(result.answerer)
        judges.add(judge)
        runs.add(len(judgments))
        rules.add(result.outcome)
    payload = {
        "total_questions": total,
        "correct": correct,
        "accuracy": correct / total if total else 0.0,
        "detailed_results": groups,
        "metadata": {
            "answer_model": answerers.pop() if len(answerers) == 1 else None,
            "judge_model": judges.pop() if len(judges) == 1 else None,
            "num_runs": runs.pop() if len(runs) == 1 else None,
            "outcome": rules.pop() if len(rules) == 1 else None,
        },
    }
    write_text_atomic(out, json.dumps(payload, ensure_ascii=False, indent=2) + "\n")
    return total


def _positions(dataset: Dataset) -> dict[str, tuple[int, int, str]]:
    """Question id -> (conversation index, question index, question text) in the file."""
    return {
        q.question_id: (i, j, q.question)
        for i, conv in enumerate(dataset.conversations)
        for j, q in enumerate(conv.questions)
    }


def _judgments(result: ArmResult) -> tuple[dict[str, bool], str | None]:
    """The verdicts to export as `judgment_k`, and the judge's model.

    The outcome's judge (`judge:<id>`) as `judgment_1`, else the first repeated judge's
    runs (`<id>#k`, ok verdicts); none when the arm has neither.
    """
    rule = Outcome.parse(result.outcome)
    single = result.judgements.get(rule.judge_id or "") if rule is not None else None
    if single is not None and single.status == OK and single.verdict is not None:
        return {"judgment_1": bool(single.verdict)}, single.model or None
    runs: dict[str, dict[int, bool]] = {}
    models: dict[str, str] = {}
    for jid, j in result.judgements.items():
        found = _RUN.fullmatch(jid)
        if found and j.status == OK and j.verdict is not None:
            runs.setdefault(found.group(1), {})[int(found.group(2))] = bool(j.verdict)
            models[found.group(1)] = j.model
    if not runs:
        return {}, None
    base = sorted(runs)[0]
    return {f"judgment_{k}": runs[base][k] for k in sorted(runs[base])}, models[base] or None
