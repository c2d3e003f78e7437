"""Where the answer prompt puts the context, and the abstention answer every reader uses.

`bench.answer.answer_prompt` builds the messages; the offline answerer (a provider) reads
the context back out of them, so the markers live below both.
"""

from __future__ import annotations

from bench.providers.base import Message

CONTEXT_OPEN = "<CONTEXT>"
CONTEXT_CLOSE = "</CONTEXT>"
ABSTAIN = "not mentioned"
"""The answer for a question the context does not answer (the prompt asks for it verbatim)."""


def extract_context(messages: list[Message]) -> str:
    """The context block of a message list built by `AnswerPrompt.messages` ('' if none)."""
    system = next((str(m["content"]) for m in messages if m.get("role") == "system"), "")
    start = system.find(CONTEXT_OPEN)
    end = system.rfind(CONTEXT_CLOSE)
    if start < 0 or end < start:
        return ""
    return system[start + len(CONTEXT_OPEN) : end].strip("\n")
