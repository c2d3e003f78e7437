"""The answer step every arm shares: one prompt, one call, one post-processing.

Invariant 1 of the design: every arm gets the same question text, the same
answer-format rules and the same post-processing; arms differ only in the context.

The model sees (worked example, rag arm, abridged)::

    system: You answer questions about a long conversation ...
            - If the context does not contain the information needed, reply exactly:
              not mentioned
            <CONTEXT>
            [Session 1 — 1:56 pm on 8 May, 2023]
            Caroline: I went to a LGBTQ support group yesterday ...
            </CONTEXT>
    user:   When did Caroline go to the LGBTQ support group?
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from bench.end_tokens import strip_end_tokens
from bench.errors import ConfigError
from bench.hashing import text_sha256
from bench.paths import resolve_resource
from bench.providers.base import Message


@dataclass(frozen=True)
class AnswerPrompt:
    """The versioned answer-format prompt: its text, file and content hash."""

    template: str
    """The prompt text with its placeholders."""
    path: str
    """File the prompt was read from."""
    sha256: str
    """SHA-256 of the prompt text (its first 12 hex digits make `version`)."""

    @property
    def version(self) -> str:
        """A short id of the prompt text, part of every cache key."""
        return f"{Path(self.path).stem}@{self.sha256[:12]}"

    def messages(self, question: str, context: str) -> list[Message]:
        """System = rules + the arm's context block; user = the question text."""
        return [
            {"role": "system", "content": self.template.replace("{context}", context)},
            {"role": "user", "content": question},
        ]


def load_answer_prompt(path: str) -> AnswerPrompt:
    """Read the prompt file (relative paths resolve against the project root)."""
    resolved = resolve_resource(path, what="answer.prompt")
    text = resolved.read_text(encoding="utf-8")
    if "{context}" not in text:  # it would silently drop every arm's context
        raise ConfigError(f"{resolved}: answer prompt has no {{context}} placeholder; add one")
    return AnswerPrompt(text, path, text_sha256(text))


_PREFIX = re.compile(r"^\s*(final answer|answer|a)\s*:\s*", re.IGNORECASE)
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")


def postprocess(raw: str) -> str:
    r"""Same cleaning for every arm: one line, no 'Answer:' prefix, quotes or final stop.

    Text from the first chat-template end token on (`<|im_end|>`, `<end_of_turn>`, `</s>`,
    ...: `bench.end_tokens`) is dropped first. A bulleted or numbered list becomes one
    comma-separated line (list answers are scored item by item); otherwise only the first
    non-empty line is kept.

    >>> postprocess('Answer: "7 May 2023".\n(from session 1)')
    '7 May 2023'
    >>> postprocess('- beach\n- forest<|im_end|>')
    'beach, forest'
    """
    lines = [ln.strip() for ln in strip_end_tokens(raw).strip().splitlines() if ln.strip()]
    if len(lines) > 1 and all(_BULLET.match(ln) for ln in lines):
        text = ", ".join(_clean(_BULLET.sub("", ln)) for ln in lines)
    else:
        text = _clean(lines[0]) if lines else ""
    return text


def _clean(text: str) -> str:
    text = _PREFIX.sub("", text).strip()
    for _ in range(2):  # quotes and a final full stop, in either order
        text = text.strip("\"'`*").strip()
        if text.endswith(".") and not text.endswith(".."):
            text = text[:-1].rstrip()
    return text
