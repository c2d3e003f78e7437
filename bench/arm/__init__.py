"""The arm interface: ingest a conversation once, then retrieve a context per question."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from bench.providers.base import ChatProvider, Embedder
from bench.tokens import TokenCounter
from bench.types import AskedQuestion, Context, Conversation

IngestProgress = Callable[[str, str, int, int, int], None]
"""`(arm, unit id, exchanges done, exchanges total, facts so far)`: an arm's ingestion progress."""


@dataclass(frozen=True)
class ArmServices:
    """What the runner hands an arm: models, a tokenizer, a store folder and the run folder."""

    embedder: Embedder
    """The shared embedding model."""
    tokens: TokenCounter
    """Counts tokens for the context budget and `context_tokens`."""
    store_dir: Path
    """The arm's private folder inside the run directory for its stores."""
    run_dir: Path
    """The run directory (`<out>`): where run-wide state such as a live arm's
    `state.json` namespace ledger lives (the store folder may sit elsewhere)."""
    extractor: ChatProvider | None = None
    """Chat model for fact extraction; None when the arm needs none."""
    max_context_tokens: int = 120_000
    """Token budget of the context block (`answer.max_context_tokens`, lowered to the
    server's context per slot under `answer.truncate_to_fit`)."""
    extract_mode: str = "tools"
    """How the extractor asks for facts (`provider.extractor.extract_mode`)."""
    llm_proxy: Callable[[str, str], str] | None = None
    """`(arm, phase) -> OpenAI base URL` of the run's accounting proxy (phase `ingest` or
    `retrieve`; bench/providers/proxy.py), started on the first call: point a library's
    own LLM and embedder at it and its calls are cached, rate limited and counted per
    arm and phase like the run's own. None where the run offers none."""
    progress: IngestProgress | None = None
    """Where an arm that ingests exchange by exchange reports its progress (the run's bar
    and heartbeat, bench.run.scale.tracker): once where it starts (a resumed store past 0)
    and after each exchange, and once with `done == total` if it stops early (its count so
    far as both); thread-safe. None where nobody listens."""


class Arm(Protocol):
    """A memory system under test.

    `ingest` is called once per conversation; an arm that builds a store checkpoints
    it under `fingerprint()` (bench.arm.checkpoint) and reopens it instead of rebuilding.
    `retrieve` must not change the arm's state unless the arm's own config says so,
    so a resumed run reproduces an uninterrupted one.

    Gold is sealed (`bench.arm.sealed.SealedArm` wraps every arm the harness opens): an
    arm receives the conversation without its questions (`Conversation.sealed`) and each
    question as a `SealedQuestion` (id, conversation id, text, date), never the gold
    answer, evidence, category or adversarial answer.
    """

    name: str

    def fingerprint(self) -> dict[str, Any]:
        """Everything that changes what `ingest` builds (params, models, code version)."""
        ...

    def ingest(self, conversation: Conversation) -> dict[str, Any]:
        """Build or reopen this conversation's memory; return ingestion stats."""
        ...

    def retrieve(self, question: AskedQuestion) -> Context:
        """The context block for this question, from the ingested conversation."""
        ...

    def close(self) -> None:
        """Release stores and files."""
        ...
