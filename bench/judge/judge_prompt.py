"""Versioned judge prompt files: `[system]`, `[user]` and `[rubric:<name>]` sections.

A prompt file (e.g. `conf/prompts/judge_locomo_v2.txt`) is plain text. Lines before the
first section header that start with `#` are comments. Placeholders are written
`{{name}}` and filled in one pass, so text inside an answer is never re-expanded. The
SHA-256 of the whole file text is the prompt hash recorded in every verdict.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from bench.errors import ConfigError
from bench.hashing import text_sha256
from bench.paths import resolve_resource

_SECTION = re.compile(r"^\[(system|user|rubric:[A-Za-z0-9_.-]+)\]\s*$")
_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")


@dataclass(frozen=True)
class JudgePrompt:
    """A parsed judge prompt file: system text, user template and rubrics by name."""

    path: str
    """File the prompt was read from."""
    sha256: str
    """SHA-256 of the file's text (part of `version`)."""
    system: str
    """The system message text."""
    user: str
    """The user message template."""
    rubrics: Mapping[str, str] = field(default_factory=dict)
    """Rubric texts keyed by rubric name (e.g. per LongMemEval question type)."""

    @property
    def version(self) -> str:
        """A short id of the prompt text (`judge_locomo_v2@1a2b3c4d5e6f`), part of cache keys."""
        return f"{Path(self.path).stem}@{self.sha256[:12]}"

    def rubric(self, name: str) -> str:
        """The rubric called `name`, or the `default` rubric when the file has none by that name."""
        return self.rubrics.get(name, self.rubrics["default"])


def fill(template: str, values: Mapping[str, str]) -> str:
    """Replace each `{{name}}` by `values[name]` in one pass; unknown names stay as written."""
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def parse_judge_prompt(text: str, path: str, required: tuple[str, ...] = ()) -> JudgePrompt:
    """Split a prompt file into its sections; raise ConfigError naming a missing one."""
    sections: dict[str, list[str]] = {}
    current: str | None = None
    for line in text.splitlines():
        match = _SECTION.match(line)
        if match:
            current = match.group(1)
            sections[current] = []
        elif current is not None:
            sections[current].append(line)
        elif line.strip() and not line.startswith("#"):
            raise ConfigError(f"{path}: text before the first [section] must be # comments")
    bodies = {name: "\n".join(lines).strip() for name, lines in sections.items()}
    rubrics = {k.split(":", 1)[1]: v for k, v in bodies.items() if k.startswith("rubric:")}
    for name in ("system", "user"):
        if not bodies.get(name):
            raise ConfigError(f"{path}: judge prompt has no [{name}] section; add one")
    for name in ("default", *required):
        if not rubrics.get(name):
            raise ConfigError(f"{path}: judge prompt has no [rubric:{name}] section; add one")
    digest = text_sha256(text)
    return JudgePrompt(path, digest, bodies["system"], bodies["user"], rubrics)


def load_judge_prompt(path: str, required: tuple[str, ...] = ()) -> JudgePrompt:
    """Read and parse a prompt file (relative paths: the working directory, then the repo)."""
    resolved = resolve_resource(path, what="judge.prompt")
    return parse_judge_prompt(resolved.read_text(encoding="utf-8"), path, required)
