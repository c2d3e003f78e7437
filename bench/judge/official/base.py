"""What every official judge shares: its construction, its runs and its judgements.

`OfficialBase.__init__` makes the judge whole from its spec, chat, upstream files and
endpoint: `judge_id`, `model`, `prompt_hash` (one file's SHA-256, or `combined_hash` of
two), `version` (its
response-cache key prefix, `<kind>@<hash[:12]>`, with `#run<k>` for run k >= 2,
`bench.scoring.judge_runs`) and `meta` (what run.json records). `with_run` makes run k
of it (stored as `<id>#<k>`); `stamped` builds a `Judgement` stamped with the judge's id,
model and prompt hash, its error message cut to one line of at most 500 characters.
"""

from __future__ import annotations

import copy
import hashlib
from dataclasses import replace
from typing import Generic, Self, TypeVar

from bench.judge.official.registry import JudgeFile
from bench.judge.protocol import JudgeSpec
from bench.judgement import JudgeStatus
from bench.providers.base import CallOptions, ChatProvider
from bench.records import Judgement
from bench.runmeta import JudgeMeta
from bench.scoring.judge_runs import run_version

T = TypeVar("T")
"""What an official judge read from its upstream files (its templates)."""


def combined_hash(files: tuple[JudgeFile, ...]) -> str:
    """SHA-256 of the files' SHA-256s, one per line in order: a two-file judge's `prompt_hash`."""
    return hashlib.sha256("".join(f"{f.sha256}\n" for f in files).encode()).hexdigest()


class OfficialBase(Generic[T]):
    """Construction, runs and judgement stamping for an official judge (one run of it).

    A subclass names its `kind`, `official_model` and upstream call `options`; `templates`
    is what it read from its upstream files (`T`).
    """

    kind: str
    """The `judges.N.kind` of the subclass."""
    official_model: str
    """The model upstream asks."""
    options: CallOptions = CallOptions()
    """Upstream's call parameters (completion cap, JSON mode); temperature is always 0."""

    def __init__(
        self,
        spec: JudgeSpec,
        chat: ChatProvider,
        files: tuple[JudgeFile, ...],
        templates: T,
        endpoint: str = "",
    ) -> None:
        self.spec = spec
        self.templates = templates
        self.judge_id = spec.judge_id or spec.config.judge_id
        self.chat = chat
        self.model: str = chat.model
        self.files = files
        self.prompt_hash = files[0].sha256 if len(files) == 1 else combined_hash(files)
        self.endpoint = endpoint
        self.version = run_version(f"{self.kind}@{self.prompt_hash[:12]}", spec.run)
        self.meta = JudgeMeta(
            judge_id=spec.config.judge_id,
            model=self.model,
            prompt_hash=self.prompt_hash,
            kind=self.kind,
            endpoint=endpoint or None,
            prompt_source=files[0].url,
            official_model=self.official_model,
            model_differs=self.official_model != self.model,
            runs=1,
        )

    def with_run(self, judge_id: str, run: int) -> Self:
        """The same judge as run `run` (its own cache key) stored under `judge_id`.

        A shallow copy re-initialised with the run's spec: the subclass's templates are
        shared, every field `__init__` sets is set again.
        """
        made = copy.copy(self)
        spec = replace(self.spec, judge_id=judge_id, run=run)
        OfficialBase.__init__(made, spec, self.chat, self.files, self.templates, self.endpoint)
        return made

    def stamped(
        self,
        status: JudgeStatus,
        *,
        verdict: bool | None = None,
        scores: dict[str, object] | None = None,
        raw: str | None = None,
        error: str | None = None,
        cached: bool = False,
    ) -> Judgement:
        """A judgement by this judge (`error` cut to its first line, 500 characters)."""
        return Judgement(
            judge_id=self.judge_id,
            status=status,
            verdict=verdict,
            model=self.model,
            prompt_hash=self.prompt_hash,
            raw=raw,
            error=error.splitlines()[0][:500] if error else error,
            cached=cached,
            scores=scores,
        )
