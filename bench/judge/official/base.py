"""What every official judge shares: its identity fields, its runs and its judgements.

A judge object holds `judge_id`, `model`, `prompt_hash` and `version` (its
response-cache key prefix); `with_run` makes run k of it (stored as `<id>#<k>`, cached
under `<version>#run<k>` for k >= 2, `bench.scoring.judge_runs`), and `_judgement`
builds a `Judgement` stamped with the judge's id, model and prompt hash, its error
message cut to one line of at most 500 characters.
"""

from __future__ import annotations

import copy
import hashlib
from typing import Any, Self

from bench.judge.official.registry import JudgeFile
from bench.providers.base import ChatProvider
from bench.records import Judgement
from bench.scoring.judge_runs import run_version


def combined_hash(files: tuple[JudgeFile, ...]) -> str:
    """SHA-256 of the files' SHA-256s, one per line in order: a two-file judge's `prompt_hash`."""
    return hashlib.sha256("".join(f"{f.sha256}\n" for f in files).encode()).hexdigest()


class OfficialBase:
    """Run handling and judgement stamping for an official judge (attributes set by subclasses)."""

    attempts = 1
    kind: str
    judge_id: str
    model: str
    prompt_hash: str
    version: str
    run: int = 1

    def bind(
        self, judge_id: str, chat: ChatProvider, files: tuple[JudgeFile, ...], endpoint: str
    ) -> None:
        """Set what every official judge records: its id, chat, files' hash, source, endpoint."""
        self.judge_id = judge_id
        self.chat = chat
        self.model = chat.model
        self.prompt_hash = combined_hash(files)
        self.prompt_source = files[0].url
        self.endpoint = endpoint
        self.run = 1
        self.version = f"{self.kind}@{self.prompt_hash[:12]}"

    def with_run(self, judge_id: str, run: int) -> Self:
        """The same judge as run `run` (its own cache key) stored under `judge_id`."""
        made = copy.copy(self)
        made.judge_id, made.run = judge_id, run
        made.version = run_version(self.version.split("#run")[0], run)
        return made

    def stamped(self, status: Any, **fields: Any) -> Judgement:
        """A judgement by this judge (`error` cut to its first line, 500 characters)."""
        if fields.get("error"):
            fields["error"] = str(fields["error"]).splitlines()[0][:500]
        return Judgement(
            judge_id=self.judge_id,
            status=status,
            model=self.model,
            prompt_hash=self.prompt_hash,
            **fields,
        )
