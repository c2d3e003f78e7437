"""Sealed gold: an arm receives the conversation and the question, never the answer key.

`SealedArm` wraps every arm the harness opens (built-in, plug-in or library:
`bench.arm.guard.open_arm`) and hands it only the question side of the data:

- `ingest(conversation)` and `probe_store(conversation)` get `Conversation.sealed()`:
  the speakers and sessions, without the questions (which carry gold answers);
- `retrieve(question)` and `rank_sources(question)` get `Question.sealed()`, a
  `SealedQuestion` (id, conversation id, text, date): a type with no gold answer,
  evidence, category, adversarial answer, rubric or abstention flag to read.

This is the field's rule for fixtures (a fixture with gold inline is a validation
error for arms) applied to what the harness hands over in process. An arm can still
read files it is not given (the dataset file, records under `run_dir`): sealing
bounds what it is handed, not what it may open.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from bench.types import AskedQuestion, Context, Conversation, Question

if TYPE_CHECKING:
    from bench.arm import Arm


def seal_question(question: AskedQuestion) -> AskedQuestion:
    """`question.sealed()` for a full `Question`; a view already sealed as it is."""
    return question.sealed() if isinstance(question, Question) else question


class SealedArm:
    """An arm as the harness calls it: every question and conversation sealed first.

    Attributes it does not define are the arm's own (`requested_k`, `breaker`, ...);
    `rank_sources` and `probe_store`, when the arm has them, are sealed too.
    """

    def __init__(self, arm: Arm) -> None:
        self._arm = arm
        self.name: str = arm.name

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("_"):
            raise AttributeError(attribute)
        value = getattr(self._arm, attribute)
        if attribute == "rank_sources":
            return _sealing(value, seal_question)
        if attribute == "probe_store":
            return _sealing(value, Conversation.sealed)
        return value

    @property
    def inner(self) -> Arm:
        """The arm itself (for tests and tools that need its own type)."""
        return self._arm

    def fingerprint(self) -> dict[str, Any]:
        """The arm's fingerprint."""
        return dict(self._arm.fingerprint())

    def ingest(self, conversation: Conversation) -> dict[str, Any]:
        """The arm's ingestion of the conversation without its questions."""
        return self._arm.ingest(conversation.sealed())

    def retrieve(self, question: AskedQuestion) -> Context:
        """The arm's context for the sealed question."""
        return self._arm.retrieve(seal_question(question))

    def close(self) -> None:
        """Close the arm."""
        self._arm.close()


def _sealing(method: Callable[[Any], Any], seal: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """`method` with its one argument sealed first."""
    return lambda value: method(seal(value))
