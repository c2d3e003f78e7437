"""graphiti: Graphiti (`graphiti-core`) on an embedded Kuzu graph, its LLM behind the proxy.

Install with `pip install 'armbench[graphiti]'`; run with `arms=[rag,graphiti]` and an
LLM extractor (`provider.extractor` not offline): Graphiti asks its LLM for entities and
facts on every episode and has no verbatim mode, and the offline models cannot write
its JSON.

Per conversation (the unit) the arm keeps a Kuzu database `<store_dir>/<conversation>/
graph.kuzu`; the conversation id (cleaned to Graphiti's alphabet) is the `group_id` of
every episode, search and count, so each unit is its own graph partition as well as
its own file.

Ingestion adds each turn as one message episode: name = the turn's `dia_id`, body =
`Speaker: text`, reference time = the session date (midnight UTC; 1970-01-01 when the
stamp has no date) plus the turn's index in seconds, so turns keep their order. Episode
names map the facts each search returns back to the turns they came from. Retrieval is
Graphiti's default hybrid search (BM25 + cosine over facts, reciprocal-rank fusion),
`k` facts.

Graphiti's chat model and embedder are OpenAI-compatible clients pointed at the run's
accounting proxy (`/arm/<arm>/ingest/v1` while ingesting, `/arm/<arm>/retrieve/v1`
while searching). Its chat client runs in `json_object` mode: the reply's JSON schema
is written into the prompt, so structured output needs nothing from the endpoint but
JSON text. Graphiti's telemetry is switched off before it is imported.

Two gaps of the Kuzu driver in graphiti-core 0.31 are closed here: it never creates
the full-text indexes its searches read (created on a new store from Graphiti's own
list), and it has no default database name, which every `add_episode` with a
`group_id` compares against (set to the unit's group id).

Checkpoints: a finished store is reused when its fingerprint matches (graphiti-core
and kuzu versions included). An interrupted episode can leave half its nodes and
edges written, so a store left unfinished is deleted and the conversation ingested
again from the first turn: nothing is written twice.
"""

from __future__ import annotations

import asyncio
import logging
import os
import warnings
from collections.abc import Coroutine
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from importlib import metadata
from pathlib import Path
from typing import Any, TypeVar

from arms.library.proxy_client import MODEL, PROXY_KEY, served_model
from bench import __version__
from bench.arm import ArmServices
from bench.arm.checkpoint import IngestCheckpoint, source_hash
from bench.arm.probe import StoreProbe
from bench.errors import ConfigError, PermanentError
from bench.hashing import stable_hash_items
from bench.paths import contained, safe_name
from bench.text import session_date
from bench.types import AskedQuestion, Context, ContextItem, Conversation, Turn

DISTRIBUTION = "graphiti-core"
"""The PyPI distribution of Graphiti (its version goes into the fingerprint)."""
COUNTS = {"episodes": "Episodic", "entities": "Entity", "facts": "RelatesToNode_"}
"""What the store probe counts per group: Kuzu table of each (facts are edge nodes)."""
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
"""Reference time of a turn whose session stamp has no date."""
T = TypeVar("T")


@dataclass
class GraphitiConfig:
    """Options of the graphiti arm (conf: arms/conf/arm/graphiti.yaml)."""

    kind: str = "graphiti"
    """The arm kind: always `graphiti`."""
    k: int = 10
    """Facts asked for per search (Graphiti's `num_results`; its own default is 10)."""
    custom_extraction_instructions: str | None = None
    """Extra instructions for Graphiti's entity and fact extraction (None: its own)."""


def load_graphiti() -> Any:
    """The `graphiti_core` package, imported with telemetry off; one-line errors otherwise."""
    os.environ["GRAPHITI_TELEMETRY_ENABLED"] = "false"
    try:
        with warnings.catch_warnings():  # pydantic's deprecation notices on its models
            warnings.simplefilter("ignore", DeprecationWarning)
            import graphiti_core
            import kuzu  # noqa: F401  (the embedded graph store)
            from graphiti_core.driver import kuzu_driver  # noqa: F401
    except ImportError as exc:
        raise ConfigError(
            f"arm graphiti: cannot import Graphiti with Kuzu ({exc}); install the extra: "
            "pip install 'armbench[graphiti]'"
        ) from None
    logging.getLogger("graphiti_core").setLevel(logging.WARNING)  # an INFO line per episode
    return graphiti_core


def reference_time(conversation: Conversation, turn: Turn, position: int) -> datetime:
    """The session date of `turn` at midnight UTC (EPOCH without a date) + `position` s.

    `position` is the turn's index in the conversation: turns of one session keep their
    order in time, which is how Graphiti picks the previous messages it shows its LLM.
    """
    day = session_date(conversation.session(turn.session).date_time)
    start = datetime.combine(day, time(), tzinfo=UTC) if day else EPOCH
    return start + timedelta(seconds=position)


def turns_hash(turns: list[Turn]) -> str:
    """`stable_hash` of `[dia_id, rendered turn, session]` per turn, fed turn by turn.

    The store's content fingerprint; the rendered turns are never held as one list (a
    second copy of the conversation that stayed alive through the whole build).
    """
    return stable_hash_items([t.dia_id, t.render(), t.session] for t in turns)


def group_id(conversation_id: str) -> str:
    """Graphiti's `group_id` of a conversation: `safe_name` with `.` as `_`."""
    return safe_name(conversation_id).replace(".", "_")


class GraphitiArm:
    """Graphiti over a Kuzu file per conversation, one `group_id` per conversation."""

    config_class = GraphitiConfig

    def __init__(self, name: str, config: GraphitiConfig, services: ArmServices) -> None:
        if services.llm_proxy is None:
            raise ConfigError(
                f"arm {name} (graphiti): this run offers no accounting proxy "
                "for Graphiti's own LLM calls; run it through bench.run"
            )
        self.graphiti = load_graphiti()
        if services.extractor is None:
            raise ConfigError(
                f"arm {name} (graphiti): Graphiti extracts with an LLM on every "
                "turn and the offline models cannot write its JSON: set "
                "provider.extractor to an LLM (docs/libraries.md)"
            )
        if config.k < 1:
            raise ConfigError(f"arm_options.{name}.k={config.k}: ask for at least 1 fact")
        self.name, self.config, self.services = name, config, services
        self.versions = {
            DISTRIBUTION: metadata.version(DISTRIBUTION),
            "kuzu": metadata.version("kuzu"),
        }
        self._loop = asyncio.new_event_loop()
        self._client: Any = None
        self._unit: str | None = None
        self._episodes: dict[str, str] = {}

    @property
    def requested_k(self) -> int:
        """Facts asked for per search (retrieval health's hidden-cap rule)."""
        return self.config.k

    def fingerprint(self) -> dict[str, Any]:
        """What a store is built from: library versions, instructions, models and code.

        `k` is left out (a search knob); the model the proxy serves is added per
        conversation in `ingest`, where asking the proxy is allowed.
        """
        return {
            "kind": "graphiti",
            "version": __version__,
            "code": source_hash(__name__),
            **self.versions,
            "custom_extraction_instructions": self.config.custom_extraction_instructions,
            "embedder": self.services.embedder.model,
            "dim": self.services.embedder.dim,
            "store": "kuzu",
        }

    def ingest(self, conversation: Conversation) -> dict[str, Any]:
        """Add every turn to a fresh graph (or reopen a finished one); open it for search."""
        root = self.services.store_dir
        folder = contained(root / safe_name(conversation.conversation_id), root)
        turns = conversation.turns()
        fingerprint = {
            **self.fingerprint(),
            "llm": self._served_model(),
            "turns": turns_hash(turns),
        }
        checkpoint = IngestCheckpoint(folder, fingerprint, root=root)
        self._close_client()
        state = checkpoint.load()
        reused = bool(state and state.get("complete"))
        if state is not None and not reused:
            checkpoint.wipe("unfinished Graphiti store (an episode may be half written)")
        group = group_id(conversation.conversation_id)
        if not reused:
            self._build(folder, conversation, turns)
        self._client = self._open(folder, "retrieve", group)
        counts = self._counts(group)
        if not reused:
            checkpoint.save({**counts, "turns": len(turns)}, complete=True)
        self._unit = conversation.conversation_id
        self._episodes = self._episode_names(group)
        return {"turns": len(turns), **counts, "reused_store": reused, **self.versions}

    def _build(self, folder: Path, conversation: Conversation, turns: list[Turn]) -> None:
        """Add each turn as an episode (LLM and embedder on the ingest proxy)."""
        from graphiti_core.graph_queries import get_fulltext_indices
        from graphiti_core.nodes import EpisodeType

        group = group_id(conversation.conversation_id)
        client = self._open(folder, "ingest", group)
        try:
            provider = client.driver.provider
            for query in get_fulltext_indices(provider):  # the Kuzu driver creates none
                self._run(client.driver.execute_query(query))
            for position, turn in enumerate(turns):
                self._add(
                    turn.dia_id,
                    client.add_episode(
                        name=turn.dia_id,
                        episode_body=turn.render(),
                        source_description=f"conversation {conversation.conversation_id} "
                        f"session {turn.session}",
                        reference_time=reference_time(conversation, turn, position),
                        source=EpisodeType.message,
                        group_id=group,
                        custom_extraction_instructions=self.config.custom_extraction_instructions,
                    ),
                )
        finally:
            self._release(client)

    def _add(self, dia_id: str, coroutine: Coroutine[Any, Any, T]) -> T:
        """One episode; a reply Graphiti's schema refuses stops the run in one line.

        Graphiti has already asked again by then (its own retries): a model that cannot
        follow the schema fails every turn alike, so no re-run of the command fixes it.
        """
        try:
            return self._run(coroutine)
        except Exception as exc:
            if not type(exc).__module__.startswith("pydantic"):
                raise
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise PermanentError(
                f"arm {self.name}: turn {dia_id}: the extractor's reply does not fit "
                f"Graphiti's schema ({first}): set provider.extractor.model to a model "
                "that follows JSON schemas"
            ) from None

    def retrieve(self, question: AskedQuestion) -> Context:
        """Graphiti's top-k facts for the question, each mapped to its episodes' dia_ids."""
        if self._client is None or self._unit != question.conversation_id:
            raise RuntimeError(
                f"arm {self.name}: conversation {question.conversation_id} "
                "was not ingested; call ingest(conversation) first"
            )
        group = group_id(question.conversation_id)
        edges = self._run(
            self._client.search(question.question, group_ids=[group], num_results=self.config.k)
        )
        items = tuple(fact_item(e, rank, self._episodes) for rank, e in enumerate(edges))
        lines = ["<FACTS>", *(f"- {i.text}" for i in items), "</FACTS>"] if items else []
        return Context("\n".join(lines), items, meta={"namespace": group})

    def probe_store(self, conversation: Conversation) -> StoreProbe | None:
        """After ingestion: the number of facts Graphiti holds for the conversation."""
        if self._client is None or self._unit != conversation.conversation_id:
            return None
        return StoreProbe(self._counts(group_id(conversation.conversation_id))["facts"], "count")

    def close(self) -> None:
        """Release the Kuzu database (the files stay) and the arm's event loop."""
        self._close_client()
        self._loop.close()

    def _counts(self, group: str) -> dict[str, int]:
        """Episodes, entities and facts stored under `group` (Kuzu counts)."""
        out = {}
        for key, table in COUNTS.items():
            query = f"MATCH (n:{table}) WHERE n.group_id = $gid RETURN count(n) AS n"
            records, _, _ = self._run(self._client.driver.execute_query(query, gid=group))
            out[key] = int(records[0]["n"]) if records else 0
        return out

    def _episode_names(self, group: str) -> dict[str, str]:
        """Episode uuid -> name (the turn's dia_id) of every episode under `group`."""
        query = "MATCH (e:Episodic) WHERE e.group_id = $gid RETURN e.uuid AS uuid, e.name AS name"
        records, _, _ = self._run(self._client.driver.execute_query(query, gid=group))
        return {str(r["uuid"]): str(r["name"]) for r in records}

    def _run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run one of Graphiti's coroutines on the arm's own event loop."""
        return self._loop.run_until_complete(coroutine)

    def _served_model(self) -> str:
        """The chat model the proxy serves this arm (its `/models` answer)."""
        assert self.services.llm_proxy is not None  # checked in __init__
        return served_model(self.services.llm_proxy(self.name, "ingest"))

    def _open(self, folder: Path, phase: str, group: str) -> Any:
        """A `Graphiti` on `folder/graph.kuzu`, its LLM and embedder on the proxy for `phase`."""
        from graphiti_core.cross_encoder.openai_reranker_client import OpenAIRerankerClient
        from graphiti_core.driver.kuzu_driver import KuzuDriver
        from graphiti_core.embedder.openai import OpenAIEmbedder, OpenAIEmbedderConfig
        from graphiti_core.llm_client.config import LLMConfig
        from graphiti_core.llm_client.openai_generic_client import OpenAIGenericClient

        assert self.services.llm_proxy is not None  # checked in __init__
        url = self.services.llm_proxy(self.name, phase)
        folder.mkdir(parents=True, exist_ok=True)
        llm = LLMConfig(
            api_key=PROXY_KEY, model=MODEL, small_model=MODEL, base_url=url, temperature=0.0
        )
        embedder = OpenAIEmbedderConfig(
            api_key=PROXY_KEY,
            embedding_model=MODEL,
            base_url=url,
            embedding_dim=self.services.embedder.dim,
        )
        with warnings.catch_warnings():  # Kuzu's deprecation notice, once per open
            warnings.simplefilter("ignore", DeprecationWarning)
            driver = KuzuDriver(str(folder / "graph.kuzu"))
        driver._database = group  # graphiti-core 0.31's Kuzu driver sets no default name
        return self.graphiti.Graphiti(
            graph_driver=driver,
            llm_client=OpenAIGenericClient(llm, structured_output_mode="json_object"),
            embedder=OpenAIEmbedder(embedder),
            cross_encoder=OpenAIRerankerClient(llm),
        )

    def _close_client(self) -> None:
        if self._client is not None:
            self._release(self._client)
        self._client, self._unit, self._episodes = None, None, {}

    def _release(self, client: Any) -> None:
        """Close the Kuzu connection and database (Kuzu locks its file while open)."""
        self._run(client.close())
        driver = client.driver
        driver.client.close()
        driver.db.close()


def fact_item(edge: Any, rank: int, episodes: dict[str, str]) -> ContextItem:
    """One retrieved fact as a context item: `[<valid date>] <fact>`, its turns' ids.

    Graphiti's fused search returns facts in rank order without scores; the item's
    score is the reciprocal rank `1 / (rank + 1)`.
    """
    valid = getattr(edge, "valid_at", None)
    text = str(edge.fact)
    shown = f"[{valid.date().isoformat()}] {text}" if isinstance(valid, datetime) else text
    ids = tuple(sorted({episodes[u] for u in (edge.episodes or []) if u in episodes}))
    return ContextItem(shown, 1.0 / (rank + 1), ids, kind="fact")
