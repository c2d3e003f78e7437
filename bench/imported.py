"""The marker of a result read from a published results file. Standard library only."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class Imported:
    """Where an imported (published) result came from; it is never re-answered or re-judged.

    A result carrying this marker was read from a published results file by
    `python -m bench.published`, not produced by a run: `bench.run` skips it on resume
    and `needs_judgement` refuses it, so its answer and verdicts stay the publisher's.
    """

    format: str
    """The published format read (`evermemos`, `longmemeval`)."""
    file_sha256: str
    """SHA-256 of the published file's bytes."""
    file_name: str
    """The published file's base name (never a local path)."""
    row: str
    """The row's own id in the published file (e.g. `locomo_0_qa3`)."""
    source_url: str | None = None
    """Where the file was published, when given on import."""
    judge_files: list[str] = field(default_factory=list)
    """SHA-256 of each separate verdict log read (LongMemEval `autoeval_label` logs)."""
