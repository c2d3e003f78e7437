"""Load a run directory into pandas: one row per (question, arm). Read-only.

    >>> df = load_run("results/locomo-offline-v0.1.0")          # doctest: +SKIP
    >>> df.groupby(["arm", "category_label"])["correct"].mean()  # doctest: +SKIP

Columns (nullable pandas dtypes; a missing score is `<NA>`, never 0):

- question: `question_id`, `dataset`, `conversation_id`, `category`, `category_label`
  (the LoCoMo label under the `official` or `mem0` scheme, or the LongMemEval
  `question_type`), `question`, `gold` (`<NA>` for adversarial questions),
  `adversarial_answer`;
- arm result: `arm`, `status` (`ok` / `error`), `answer`, `correct` (the binary outcome
  the summary pairs on), `outcome` (the rule behind it), `f1`, `em`, `abstained`,
  `trap_hit` (from `scores`), `context_tokens`, `latency_ms`, `retrieve_ms`, `cached`,
  `error`, and one column `judge:<id>` per judge that gave any verdict (`<NA>` when that
  judge errored or did not score the answer).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from bench.errors import BenchError
from bench.records import OK, QuestionRecord, iter_records
from bench.runmeta import read_run_meta
from bench.scoring.rules import JUDGE_OUTCOME_PREFIX
from bench.summarise.model import LABEL_SCHEMES, group_label

QUESTION_COLUMNS = [
    "question_id",
    "dataset",
    "conversation_id",
    "category",
    "category_label",
    "question",
    "gold",
    "adversarial_answer",
]
ARM_COLUMNS = [
    "arm",
    "status",
    "answer",
    "correct",
    "outcome",
    "f1",
    "em",
    "abstained",
    "trap_hit",
    "context_tokens",
    "latency_ms",
    "retrieve_ms",
    "cached",
    "error",
]
SCORE_COLUMNS = ("f1", "em", "abstained", "trap_hit")
JUDGE_PREFIX = JUDGE_OUTCOME_PREFIX
_DTYPES = {
    "category": "Int64",
    "correct": "boolean",
    "f1": "Float64",
    "em": "boolean",
    "abstained": "boolean",
    "trap_hit": "boolean",
    "context_tokens": "Int64",
    "latency_ms": "Float64",
    "retrieve_ms": "Float64",
    "cached": "boolean",
}
_STRINGS = (
    "question_id",
    "dataset",
    "conversation_id",
    "category_label",
    "question",
    "gold",
    "adversarial_answer",
    "arm",
    "status",
    "answer",
    "outcome",
    "error",
)


def load_run(run_dir: str | Path, labels: str = "official") -> pd.DataFrame:
    """Every (question, arm) result of a run as a long DataFrame, in question then arm order.

    `labels` names the LoCoMo category label scheme (`official` or `mem0`). Raises
    BenchError (one line) when `run_dir` is not a run directory. Never writes anything.
    """
    if labels not in LABEL_SCHEMES:
        raise BenchError(f"labels={labels!r}: unknown scheme; use one of {sorted(LABEL_SCHEMES)}")
    path = _checked_run_dir(Path(run_dir))
    try:
        records = iter_records(path)
    except (ValueError, KeyError, TypeError, json.JSONDecodeError) as exc:
        raise BenchError(f"{path}: unreadable question record ({exc})") from exc
    arm_order = _arm_order(path, records)
    rows = [
        _row(record, arm, labels) for record in records for arm in arm_order if arm in record.arms
    ]
    judges = sorted({key for row in rows for key in row if key.startswith(JUDGE_PREFIX)})
    frame = pd.DataFrame(rows, columns=[*QUESTION_COLUMNS, *ARM_COLUMNS, *judges])
    return _typed(frame, judges)


def paired(df: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    """Arms `a` and `b` side by side, one row per question both answered.

    Question columns appear once; every arm column appears twice, suffixed `_<a>` and
    `_<b>` (e.g. `correct_raw`, `correct_rag`). `pair` says how the two outcomes split:
    `both`, `a_only`, `b_only`, `neither`, or `<NA>` when either outcome is missing
    (an `error`, or no verdict) — the `a_only` / `b_only` counts are McNemar's
    discordant pairs.
    """
    if a == b:
        raise ValueError(f"paired: compare two different arms (got {a!r} twice)")
    known = set(df["arm"].unique())
    for name in (a, b):
        if name not in known:
            raise ValueError(f"paired: no arm {name!r} in the frame (arms: {sorted(known)})")
    per_arm = [c for c in df.columns if c not in QUESTION_COLUMNS and c != "arm"]
    left = df.loc[df["arm"] == a, [*QUESTION_COLUMNS, *per_arm]]
    right = df.loc[df["arm"] == b, ["question_id", *per_arm]]
    wide = left.merge(right, on="question_id", how="inner", suffixes=(f"_{a}", f"_{b}"))
    wide.insert(
        len(QUESTION_COLUMNS), "pair", _pair_labels(wide[f"correct_{a}"], wide[f"correct_{b}"])
    )
    return wide.reset_index(drop=True)


def context_tokens_by_arm(df: pd.DataFrame) -> dict[str, list[int]]:
    """Context tokens of every `ok` answer that reports them, per arm (first-seen order)."""
    ok = df[(df["status"] == OK) & df["context_tokens"].notna()]
    return {
        str(arm): [int(v) for v in group["context_tokens"]]
        for arm, group in ok.groupby("arm", sort=False)
    }


def _pair_labels(ca: pd.Series, cb: pd.Series) -> pd.Series:
    """`both` / `a_only` / `b_only` / `neither` per row; `<NA>` when either side is missing."""
    names = {
        (True, True): "both",
        (True, False): "a_only",
        (False, True): "b_only",
        (False, False): "neither",
    }
    values = [
        pd.NA if pd.isna(x) or pd.isna(y) else names[(bool(x), bool(y))]
        for x, y in zip(ca, cb, strict=True)
    ]
    return pd.Series(values, index=ca.index, dtype="string")


def _checked_run_dir(path: Path) -> Path:
    """The run directory, or a one-line BenchError saying what is missing."""
    if not path.is_dir():
        raise BenchError(f"{path}: no such run directory; pass results/<run>")
    if not (path / "questions").is_dir():
        raise BenchError(f"{path}: not a run directory (no questions/ folder); pass results/<run>")
    return path


def _arm_order(path: Path, records: list[QuestionRecord]) -> list[str]:
    """Arms in run.json order, then any others in order of first appearance."""
    meta, _ = read_run_meta(path / "run.json")
    listed = meta.arms if meta else []
    seen = [name for record in records for name in record.arms]
    return list(dict.fromkeys([*listed, *seen]))


def _row(record: QuestionRecord, arm: str, labels: str) -> dict[str, object]:
    """One (question, arm) row."""
    result = record.arms[arm]
    row: dict[str, object] = {
        "question_id": record.question_id,
        "dataset": record.dataset,
        "conversation_id": record.conversation_id,
        "category": record.category,
        "category_label": category_label(record, labels),
        "question": record.question,
        "gold": record.gold,
        "adversarial_answer": record.adversarial_answer,
        "arm": arm,
        "status": result.status,
        "answer": result.answer,
        "correct": result.correct,
        "outcome": result.outcome,
        "context_tokens": result.context_tokens,
        "latency_ms": result.latency_ms,
        "retrieve_ms": result.retrieve_ms,
        "cached": result.cached,
        "error": result.error,
    }
    row.update({name: result.scores.get(name) for name in SCORE_COLUMNS})
    for judge_id, judgement in result.judgements.items():
        verdict = judgement.verdict if judgement.status == OK else None
        row[f"{JUDGE_PREFIX}{judge_id}"] = verdict
    return row


def category_label(record: QuestionRecord, labels: str = "official") -> str | None:
    """The LongMemEval `question_type`, else the LoCoMo label of the category integer."""
    if record.question_type:
        return record.question_type
    if record.category is None:
        return None
    return group_label(str(record.category), labels)


def _typed(frame: pd.DataFrame, judges: list[str]) -> pd.DataFrame:
    """Nullable dtypes: `<NA>` for missing values instead of NaN/None/object mixes."""
    dtypes: dict[str, str] = {**_DTYPES, **{j: "boolean" for j in judges}}
    dtypes.update({c: "string" for c in _STRINGS})
    return frame.astype(dtypes)
