"""The typed rows of a published results file, before they are matched to a dataset.

Every format reader (`evermemos`, `longmemeval`) returns a `PublishedFile`; matching
(`match`) and writing (`write`) never see the file's own JSON.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bench.errors import BenchError

READABLE: tuple[str, ...] = ("evermemos", "longmemeval")
"""Formats `bench.published` reads (and `export` writes)."""
NOT_YET: dict[str, str] = {
    "nmafc": "NMAFC's results.json",
    "zep": "Zep's grade files",
}
"""Formats named by the issue that are refused: no verified upstream example is at hand."""
JUDGE_PREFIX = "published:"
"""Judge ids of imported verdicts: `published:<judge model>#<run>`."""


class PublishedError(BenchError):
    """A published file (or the dataset it is matched to) that cannot be imported."""


@dataclass(frozen=True)
class PublishedRow:
    """One question's published answer and its verdicts, one per judge run."""

    row: str
    """The row's id in the file (`locomo_0_qa3`; a LongMemEval `question_id`)."""
    where: str
    """Where the row sits in the file, for error lines (`detailed_results.<key>[3]`)."""
    answer: str
    """The published answer (`generated_answer`, `hypothesis`)."""
    verdicts: tuple[bool, ...]
    """Verdict of each judge run, in run order (empty when the file has none)."""
    question: str | None = None
    """The question text the file carries (None when the format has none)."""
    category: int | None = None
    """The category the file gives (LoCoMo), checked against the dataset's."""
    gold: str | None = None
    """The gold answer the file gives (its verdicts were judged against it), if any."""


@dataclass(frozen=True)
class PublishedFile:
    """A parsed published file: its rows, models and what was skipped."""

    format: str
    """The format read."""
    rows: list[PublishedRow]
    """Every row, in file order."""
    judge_model: str | None = None
    """The judge model the file names (EverMemOS `metadata.judge_model`), else None."""
    answer_model: str | None = None
    """The answering model the file names, else None."""
    runs: int = 0
    """Judge runs per row (every row has the same number)."""
    judge_files: list[str] = field(default_factory=list)
    """SHA-256 of each separate verdict log read."""
    outcome_rule: str | None = None
    """The F1 outcome rule `metadata.outcome` names (armbench's own export of an arm scored
    by it, `f1>=0.5`); applied to rows without verdicts, so a re-import keeps the outcomes."""


def judge_base(judge_model: str) -> str:
    """`published:<model>`: the judge id shared by every run of the file's judge."""
    return f"{JUDGE_PREFIX}{judge_model}"


def judge_run_id(judge_model: str, run: int) -> str:
    """`published:<model>#<run>`: the id of one judge run's verdicts (run counts from 1)."""
    return f"{judge_base(judge_model)}#{run}"
