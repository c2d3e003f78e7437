"""One judge's verdict on one answer, as records keep it. Standard library only."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

JudgeStatus = Literal["ok", "error", "unparseable", "skipped"]
"""A verdict's status: `error` (the call failed) is retried on resume; `unparseable` (no
verdict after `scoring.judge_attempts` asks) is kept and asked again only with rejudge;
`skipped`: the judge does not grade this question by definition (Mem0's judge skips
LoCoMo category 5), no call is made and no verdict counts."""


@dataclass(slots=True)
class Judgement:
    """One judge's verdict on one answer, or why there is none."""

    judge_id: str
    """Key of the judge in the config's `judges` table."""
    status: JudgeStatus
    """`ok` when a verdict was parsed; `error` (the call failed; retried on resume);
    `unparseable` (no verdict after `attempts` asks; kept unless `scoring.rejudge`);
    `skipped` (outside the judge's scope, e.g. Mem0's judge on LoCoMo category 5)."""
    verdict: bool | None = None
    """True when the judge called the answer correct; None on `error`."""
    model: str = ""
    """The judge's model name."""
    prompt_hash: str = ""
    """SHA-256 of the judge prompt file the verdict was made with (for an official judge,
    of the upstream file its template was read from)."""
    raw: str | None = None
    """The judge's reply text, unparsed; None when the call itself failed."""
    error: str | None = None
    """Why the judgement failed (first line, at most 500 chars), when `status` is `error`."""
    cached: bool = False
    """True when the judge's reply came from the response cache."""
    attempts: int = 1
    """Asks made for this verdict (more than one only after unparseable replies)."""
    scores: dict[str, Any] | None = None
    """A scoring judge's figures (BEAM's official judge: `rubric`, `rubric_kept`,
    `rubric_items`, `event_order_*`); omitted from the JSON when None."""
