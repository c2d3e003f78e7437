"""mem0: Mem0 OSS (the `mem0ai` library) as an arm, its LLM and embedder behind the proxy.

Install with `pip install 'armbench[mem0]'`; run with `arms=[rag,mem0]`.

Per conversation (the unit) the arm keeps a folder `<store_dir>/<conversation>/` with a
local Qdrant collection on disk and Mem0's SQLite history; the conversation id is
Mem0's `user_id`, so every add, search and count is scoped to its own unit.

Ingestion adds each turn as one user message, `[<session date>] <Speaker>: <text>`, with
the turn's `dia_id`, session and session date as metadata (Mem0 OSS refuses the
`timestamp` argument, so the date travels in the text and the metadata). With `infer`
Mem0 asks its LLM to extract memories from each turn and embeds them; without it, Mem0
stores each turn verbatim and only embeds. Every memory keeps the metadata of the turn
it came from, which maps retrieved memories back to turn ids.

Mem0's chat model and embedder are OpenAI-compatible clients pointed at the run's
accounting proxy, `/arm/<arm>/ingest/v1` while ingesting and `/arm/<arm>/retrieve/v1`
while searching, so their calls are cached, rate limited and counted per arm and phase
like the run's own. Mem0's telemetry is switched off before it is imported (the run is
offline and its notices would print to stderr), and its home folder (`MEM0_DIR`)
defaults to the arm's store folder instead of `~/.mem0`.

Checkpoints: a finished store is reused when its fingerprint matches (the Mem0 version
included). Mem0 cannot resume a half-done `add` sequence, so a store left unfinished by
an interrupted run is deleted and its conversation ingested again from the first turn:
no memory is ever written twice.
"""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from arms.library.proxy_client import MODEL, PROXY_KEY, served_model
from bench import __version__
from bench.arm import ArmServices
from bench.arm.checkpoint import IngestCheckpoint, source_hash
from bench.arm.probe import StoreProbe
from bench.errors import ConfigError
from bench.hashing import stable_hash_lists
from bench.paths import contained, safe_name
from bench.types import AskedQuestion, Context, ContextItem, Conversation, Turn

DISTRIBUTION = "mem0ai"
"""The PyPI distribution of Mem0 OSS (its version goes into the fingerprint)."""
COLLECTION = "mem0"
"""Qdrant collection name inside each conversation's folder."""
COUNT_LIMIT = 1_000_000
"""`get_all` limit of the store probe (Mem0's default of 20 would cap the count)."""


@dataclass
class Mem0Config:
    """Options of the mem0 arm (conf: arms/conf/arm/mem0.yaml)."""

    kind: str = "mem0"
    """The arm kind: always `mem0`."""
    k: int = 20
    """Memories asked for per search (Mem0's `top_k`; its own default is 20)."""
    infer: bool | None = None
    """Let Mem0's LLM extract memories from each turn (`true`), store turns verbatim
    (`false`), or None: extract when the run has an LLM extractor (`provider.extractor`
    not offline), verbatim otherwise (the offline models cannot write Mem0's JSON)."""
    threshold: float = 0.1
    """Mem0's similarity floor for search results (its own default, 0.1)."""
    custom_instructions: str | None = None
    """Extra extraction instructions passed to Mem0 (None: Mem0's own prompt only)."""


def load_memory_class(home: Path) -> Any:
    """Mem0's `Memory` class, imported with telemetry off; one-line errors otherwise."""
    if os.environ.get("OPENROUTER_API_KEY"):
        raise ConfigError(
            "arm mem0: OPENROUTER_API_KEY is set, and Mem0 then sends its LLM calls to "
            "OpenRouter instead of the run's accounting proxy; unset it for this run"
        )
    if "mem0" not in sys.modules:
        os.environ["MEM0_TELEMETRY"] = "False"
        os.environ.setdefault("MEM0_DIR", str(home))
    try:
        from mem0 import Memory
        from mem0.memory import telemetry
    except ImportError as exc:
        raise ConfigError(
            f"arm mem0: cannot import Mem0 ({exc}); install the extra: pip install 'armbench[mem0]'"
        ) from None
    logging.getLogger("mem0").setLevel(logging.WARNING)  # an INFO line per stored vector
    if telemetry.MEM0_TELEMETRY:
        raise ConfigError(
            "arm mem0: Mem0 was imported with telemetry on; unset MEM0_TELEMETRY and "
            "do not import mem0 before the run"
        )
    return Memory


def turn_message(conversation: Conversation, turn: Turn) -> dict[str, str]:
    """The user message one turn is added as: `[<session date>] <Speaker>: <text>`."""
    date = conversation.session(turn.session).date_time
    return {"role": "user", "content": f"[{date}] {turn.render()}"}


def turns_hash(conversation: Conversation, turns: list[Turn]) -> str:
    """`stable_hash([messages, dia_ids])` of the turns, each message rendered as it is fed.

    The store's content fingerprint; no list of every rendered message (a second copy
    of the conversation, held through the whole build) is made.
    """
    messages = (turn_message(conversation, t) for t in turns)
    return stable_hash_lists([messages, (t.dia_id for t in turns)])


class Mem0Arm:
    """Mem0 OSS over a local Qdrant store, one `user_id` per conversation."""

    config_class = Mem0Config

    def __init__(self, name: str, config: Mem0Config, services: ArmServices) -> None:
        if services.llm_proxy is None:
            raise ConfigError(
                f"arm {name} (mem0): this run offers no accounting proxy for "
                "Mem0's own LLM calls; run it through bench.run"
            )
        if config.k < 1:
            raise ConfigError(f"arm_options.{name}.k={config.k}: ask for at least 1 memory")
        self.name, self.config, self.services = name, config, services
        self.memory_class = load_memory_class(services.store_dir / "mem0_home")
        self.version = metadata.version(DISTRIBUTION)
        self.infer = config.infer if config.infer is not None else services.extractor is not None
        self._memory: Any = None
        self._unit: str | None = None

    @property
    def requested_k(self) -> int:
        """Memories asked for per search (retrieval health's hidden-cap rule)."""
        return self.config.k

    def fingerprint(self) -> dict[str, Any]:
        """What a store is built from: Mem0's version, extraction mode, models and code.

        `k` and `threshold` are left out (search knobs); the model the proxy serves is
        added per conversation in `ingest`, where asking the proxy is allowed.
        """
        return {
            "kind": "mem0",
            "version": __version__,
            "code": source_hash(__name__),
            DISTRIBUTION: self.version,
            "infer": self.infer,
            "custom_instructions": self.config.custom_instructions,
            "embedder": self.services.embedder.model,
            "dim": self.services.embedder.dim,
            "store": "qdrant",
        }

    def ingest(self, conversation: Conversation) -> dict[str, Any]:
        """Add every turn to a fresh store (or reopen a finished one); open it for search."""
        root = self.services.store_dir
        folder = contained(root / safe_name(conversation.conversation_id), root)
        turns = conversation.turns()
        fingerprint = {
            **self.fingerprint(),
            "llm": self._served_model() if self.infer else None,
            "turns": turns_hash(conversation, turns),
        }
        checkpoint = IngestCheckpoint(folder, fingerprint, root=root)
        self._close_memory()
        state = checkpoint.load()
        reused = bool(state and state.get("complete"))
        if state is not None and not reused:
            checkpoint.wipe("unfinished Mem0 store (Mem0 cannot resume its adds)")
        if reused and state is not None:
            added = int(state.get("added", 0))
        else:
            added = self._build(folder, conversation, turns)
            checkpoint.save({"added": added, "turns": len(turns)}, complete=True)
        self._memory = self._open(folder, "retrieve")
        self._unit = conversation.conversation_id
        return {
            "turns": len(turns),
            "added": added,
            "infer": self.infer,
            "reused_store": reused,
            DISTRIBUTION: self.version,
        }

    def _build(self, folder: Path, conversation: Conversation, turns: list[Turn]) -> int:
        """Add each turn through Mem0 (LLM and embedder on the ingest proxy); memories added.

        Each turn's message is rendered when it is added, never all at once.
        """
        memory = self._open(folder, "ingest")
        user = safe_name(conversation.conversation_id)
        added = 0
        try:
            for turn in turns:
                date = conversation.session(turn.session).date_time
                meta = {"dia_id": turn.dia_id, "session": turn.session, "session_date": date}
                message = turn_message(conversation, turn)
                reply = memory.add([message], user_id=user, metadata=meta, infer=self.infer)
                added += sum(1 for r in reply.get("results", []) if r.get("event") == "ADD")
        finally:
            self._release(memory)
        return added

    def retrieve(self, question: AskedQuestion) -> Context:
        """Mem0's top-k memories for the question, each mapped to its turn's dia_id."""
        if self._memory is None or self._unit != question.conversation_id:
            raise RuntimeError(
                f"arm {self.name}: conversation {question.conversation_id} "
                "was not ingested; call ingest(conversation) first"
            )
        user = safe_name(question.conversation_id)
        reply = self._memory.search(
            question.question,
            top_k=self.config.k,
            filters={"user_id": user},
            threshold=self.config.threshold,
        )
        items = tuple(memory_item(r) for r in reply.get("results", []))
        lines = ["<MEMORIES>", *(f"- {i.text}" for i in items), "</MEMORIES>"] if items else []
        text = "\n".join(lines)  # nothing found: an empty context, counted as one
        return Context(text, items, meta={"namespace": user})

    def probe_store(self, conversation: Conversation) -> StoreProbe | None:
        """After ingestion: the number of memories Mem0 holds for the conversation."""
        if self._memory is None or self._unit != conversation.conversation_id:
            return None
        listed = self._memory.get_all(
            filters={"user_id": safe_name(conversation.conversation_id)}, top_k=COUNT_LIMIT
        )
        return StoreProbe(len(listed.get("results", [])), "count")

    def close(self) -> None:
        """Close Mem0's history database and the Qdrant store (the files stay)."""
        self._close_memory()

    def _served_model(self) -> str:
        """The chat model the proxy serves this arm (its `/models` answer)."""
        assert self.services.llm_proxy is not None  # checked in __init__
        return served_model(self.services.llm_proxy(self.name, "ingest"))

    def _open(self, folder: Path, phase: str) -> Any:
        """A Mem0 `Memory` on `folder`, its LLM and embedder on the proxy for `phase`."""
        assert self.services.llm_proxy is not None  # checked in __init__
        url = self.services.llm_proxy(self.name, phase)
        folder.mkdir(parents=True, exist_ok=True)
        dim = self.services.embedder.dim
        client = {"model": MODEL, "openai_base_url": url, "api_key": PROXY_KEY}
        config: dict[str, Any] = {
            "vector_store": {
                "provider": "qdrant",
                "config": {
                    "collection_name": COLLECTION,
                    "path": str(folder / "qdrant"),
                    "on_disk": True,
                    "embedding_model_dims": dim,
                },
            },
            "llm": {"provider": "openai", "config": {**client, "temperature": 0.0}},
            "embedder": {"provider": "openai", "config": {**client, "embedding_dims": dim}},
            "history_db_path": str(folder / "history.db"),
            "custom_instructions": self.config.custom_instructions,
        }
        return self.memory_class.from_config(config)

    def _close_memory(self) -> None:
        if self._memory is not None:
            self._release(self._memory)
        self._memory, self._unit = None, None

    @staticmethod
    def _release(memory: Any) -> None:
        """Close the history database and Qdrant's local client (it locks its folder)."""
        memory.close()
        client = getattr(getattr(memory, "vector_store", None), "client", None)
        if client is not None:
            client.close()


def memory_item(result: dict[str, Any]) -> ContextItem:
    """One search result as a context item: `[<session date>] <memory>`, its turn id."""
    meta = result.get("metadata") or {}
    dia_id, date = meta.get("dia_id"), meta.get("session_date")
    text = str(result.get("memory", ""))
    shown = f"[{date}] {text}" if date and not text.startswith(f"[{date}]") else text
    score = result.get("score")
    return ContextItem(
        shown,
        float(score) if isinstance(score, int | float) else 0.0,
        (str(dia_id),) if dia_id else (),
        kind="memory",
    )
