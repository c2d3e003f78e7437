"""What the `http` and `mcp` arms share: namespaces, benchmark markers, response shapes.

A live arm stores a conversation in its own namespace of a running memory service and
retrieves from it. Each turn is written with the marker `[bench:<unit tag>/<dia_id>]`
(`unit_marker`: the tag hashes the run's nonce and the unit), in metadata (default) or
appended to the text, so every returned item maps back to the turns it came from —
however the service ids, merges or splits memories — and to the namespace that holds
it: in a namespace the arm created, an item whose marker is not this unit's of this run
(another unit's, another run's, or untagged) is a retrieval-health error naming the
marker, not a score. Each namespace is checked to be new before the first write and to
be this run's before a delete (arms/live_owner.py). Items whose markers name no
turn of this unit keep no source ids (counted in `meta`).

Response shapes are read with dotted JSON paths (`results`, `metadata.bench`,
`data.0.id`); a configured path missing from a response is a `ContractError` naming
the path, the endpoint and the setting to change.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from arms.live_calls import CallLog, CircuitBreaker
from arms.live_markers import MARKER, split_marker, unit_marker, unit_tag
from arms.live_owner import check_new, delete_recorded
from arms.live_replies import ContractError, CrossNamespaceError, at, markers_of
from arms.neuromorphic.exchange import Exchange, exchanges
from bench.arm import ArmServices
from bench.arm.live_state import (
    LiveArm,
    Namespace,
    NamespaceError,
    NamespaceLedger,
    checked_namespace,
    endpoint_hash,
    namespace_name,
    owner_gone,
    this_process,
)
from bench.arm.probe import StoreProbe
from bench.errors import BenchError, ConfigError
from bench.providers.secrets import redact
from bench.types import AskedQuestion, Context, ContextItem, Conversation, Turn

log = logging.getLogger("arms.live")
WRITE_PATHS = ("capture", "remember")
MARKER_MODES = ("metadata", "text")


@dataclass
class LiveOptions:
    """Options every live arm shares (the transport adds its own)."""

    kind: str = "live"
    """The arm kind (`http` or `mcp` in the subclasses)."""
    namespace: str | None = None
    """An existing namespace id to use for every conversation; never created or deleted."""
    write_path: str = "capture"
    """`capture` (the service's own extraction path) or `remember` (raw storage)."""
    marker: str = "metadata"
    """Where the `[bench:<unit id>]` marker goes: `metadata` or `text`."""
    k: int = 20
    """Results asked for per search: the largest cutoff scored. 20 is what the reference
    server's engine recalls at most; asking a service for more than it ever returns
    reads as a probable hidden cap in retrieval health (bench.scoring.retrieval_health)."""
    cleanup: bool = True
    """Delete the namespaces this run created when the arm closes."""
    probe: bool = True
    """Check the contract at start-up (reachable, authorised, shapes match)."""
    results_path: str = "results"
    """Dotted path to the list of items in a search reply."""
    text_path: str = "text"
    """Dotted path to an item's text, within one item."""
    score_path: str | None = "score"
    """Dotted path to an item's score; None scores every item 0.0."""
    marker_path: str | None = "metadata.bench"
    """Dotted path to an item's unit marker(s); None reads `[bench:..]` from text."""
    context_path: str | None = "context"
    """Where the service's rendered context is; None renders the items as lines."""
    create_id_path: str = "id"
    """Dotted path to the new namespace's id in a create reply."""
    list_path: str | None = "projects"
    """Dotted path to the list of namespaces in a listing reply; None when the service
    has no listing (a new namespace must then be empty, arms/live_owner.py)."""
    list_id_path: str = "id"
    """Dotted path to a namespace's id, within one entry of the listing."""
    list_name_path: str = "name"
    """Dotted path to a namespace's name, within one entry of the listing."""
    breaker_timeouts: int = 3
    """Consecutive calls that run out of time before the arm's circuit breaker opens
    (its remaining calls then fail at once, as `error` results; arms/live_calls.py)."""


class Backend(Protocol):
    """One transport to a memory service (REST or MCP)."""

    where: str
    breaker: CircuitBreaker

    def probe(self) -> None:
        """Fail fast (one line) when the service is unreachable or refuses us."""
        ...

    def create(self, name: str) -> Any:
        """Create a namespace named `name`; its id."""
        ...

    def names(self) -> dict[str, str] | None:
        """Every namespace the service lists, id -> name; None without a listing."""
        ...

    def delete(self, namespace: str) -> None:
        """Delete a namespace (already gone counts as deleted)."""
        ...

    def capture(self, namespace: str, exchange: Exchange, messages: list[Any]) -> None:
        """Write one exchange through the service's capture path."""
        ...

    def remember(self, namespace: str, text: str, unit_id: str, date_time: str) -> None:
        """Store one unit's text verbatim, with its marker."""
        ...

    def search(self, namespace: str, query: str, k: int) -> Any:
        """The raw search reply for `query` (top `k`)."""
        ...

    def close(self) -> None:
        """Release the connection."""
        ...


class LiveMemoryArm:
    """A memory service as a benchmark arm; the transport is a `Backend`."""

    def __init__(
        self, name: str, options: LiveOptions, services: ArmServices, backend: Backend
    ) -> None:
        if options.write_path not in WRITE_PATHS:
            raise BenchError(
                f"arm_options.{name}.write_path={options.write_path}: "
                f"use one of {', '.join(WRITE_PATHS)}"
            )
        if options.marker not in MARKER_MODES:
            raise BenchError(
                f"arm_options.{name}.marker={options.marker}: use one of {', '.join(MARKER_MODES)}"
            )
        if options.namespace is not None:
            checked_namespace(options.namespace, f"arm_options.{name}.namespace")
        self.name = name
        self.options = options
        self.backend = backend
        self.calls = CallLog()
        self.ledger = NamespaceLedger(services.run_dir)
        self._namespaces: dict[str, str] = {}
        self._turn_ids: dict[str, set[str]] = {}  # the current unit's only (bounded)
        arm = LiveArm(name, options.kind, endpoint_hash(backend.where))
        self.nonce = self.ledger.register_arm(arm)
        if options.probe:
            backend.probe()
        # what a killed earlier run left; never a sibling worker's namespaces in use
        delete_recorded(name, backend, self.ledger, options, lambda n: owner_gone(n.owner))
        if options.probe:
            self._probe()

    def _probe(self) -> None:
        """One round trip through the configured contract, in a throwaway namespace.

        Create (recorded first), write one unit through the write path, search, read
        every configured response path, delete. A mismatch fails here, at start-up,
        as one line naming the endpoint and the setting (exit 2), not per question.
        """
        turn = Turn("Probe", "I moved to Lisbon in March 2024.", "probe:1", 1)
        namespace = self.options.namespace or self._create("probe")
        try:
            if not self.options.namespace:
                self._write(namespace, Exchange(1, "1 April 2024", (turn,)), "probe")
            reply = self.backend.search(namespace, "Where did Probe move?", 1)
            items, _ = self._items(reply, {turn.dia_id}, "probe", namespace)
            self._context(reply, items)
            self._probe_more(namespace, "Where did Probe move?")
        finally:
            if not self.options.namespace:
                self.backend.delete(namespace)
                self.ledger.remove(Namespace(self.name, namespace, "probe", this_process()))
            self.calls = CallLog()

    def _probe_more(self, namespace: str, query: str) -> None:
        """A transport's extra probe of optional endpoints (none by default)."""

    def fingerprint(self) -> dict[str, Any]:
        """Options and endpoint: what changes what the service stores."""
        return {"options": asdict(self.options), "endpoint": self.backend.where}

    def ingest(self, conversation: Conversation) -> dict[str, Any]:
        """Create (and record) a namespace, then write every turn through the write path."""
        cid = conversation.conversation_id
        namespace = self.options.namespace or self._create(cid)
        self._namespaces[cid] = namespace
        units: set[str] = set()
        self._turn_ids = {cid: units}  # an earlier unit's items then map by their tag alone
        self.calls.restart(self.options.write_path)
        for exchange in exchanges(conversation):
            units.update(exchange.dia_ids())
            self._write(namespace, exchange, cid)
        kind = self.options.write_path
        return {
            "namespace": namespace,
            "write_path": kind,
            "writes": self.calls.calls[kind],
            "write_ms": round(self.calls.ms[kind], 3),
        }

    def _create(self, unit: str) -> str:
        """Create a namespace for `unit`; its checked id, recorded before any write.

        The id comes from the service: it is checked (`checked_namespace`), must be the
        namespace just created under `namespace_name` (`check_new`: else the arm stops)
        and must not be in use by another unit of this run (`NamespaceLedger.add`), else
        the unit fails with a ContractError naming the reply; nothing is written or deleted.
        """
        name = namespace_name(self.name, unit, self.nonce)
        started = time.perf_counter()
        raw = self.backend.create(name)
        self.calls.timed("create", started)
        where = f"{self.backend.where} create reply for unit {unit!r}"
        try:
            namespace = checked_namespace(raw, where)
        except NamespaceError as exc:
            raise ContractError(str(exc)) from None
        check_new(self.backend, self.options, namespace, name, where)
        try:
            self.ledger.add(Namespace(self.name, namespace, unit, this_process(), name))
        except NamespaceError as exc:
            raise ContractError(str(exc)) from None
        return namespace

    def _write(self, namespace: str, exchange: Exchange, unit: str) -> None:
        """Write one exchange; every turn's marker is `<unit tag>/<dia_id>` (`unit_marker`)."""
        text_marker = self.options.marker == "text"
        started = time.perf_counter()
        if self.options.write_path == "capture":
            messages = [
                {"speaker": t.speaker, "id": unit_marker(unit, t.dia_id, self.nonce),
                 "image_caption": t.image_caption,
                 "text": f"{t.text} [bench:{unit_marker(unit, t.dia_id, self.nonce)}]"
                 if text_marker
                 else t.text}
                for t in exchange.turns
            ]  # fmt: skip
            self.backend.capture(namespace, exchange, messages)
        else:
            for turn in exchange.turns:
                marker = unit_marker(unit, turn.dia_id, self.nonce)
                text = turn.render() + (f" [bench:{marker}]" if text_marker else "")
                self.backend.remember(namespace, text, marker, exchange.date_time)
        self.calls.timed(self.options.write_path, started)

    def retrieve(self, question: AskedQuestion) -> Context:
        """Search the conversation's namespace; map items back to turn ids by marker."""
        namespace = self._namespaces.get(question.conversation_id)
        if namespace is None:
            raise BenchError(
                f"arm {self.name}: conversation {question.conversation_id} was not "
                "ingested; call ingest(conversation) before retrieve"
            )
        started = time.perf_counter()
        reply = self.backend.search(namespace, question.question, self.options.k)
        service_ms = self.calls.timed("search", started)
        units = self._turn_ids.get(question.conversation_id, set())
        items, unmapped = self._items(reply, units, question.conversation_id, namespace)
        text = self._context(reply, items)
        meta = {
            "namespace": namespace,
            "service_ms": round(service_ms, 3),
            "unmapped_items": unmapped,
        }
        return Context(text, tuple(items), meta=meta, write_path=self.options.write_path)

    def _items(
        self, reply: Any, units: set[str], unit: str, namespace: str
    ) -> tuple[list[ContextItem], int]:
        """The reply's items, each mapped to the unit's turn ids by its markers.

        A marker that is not this unit's of this run (another unit's or run's tag, or
        none) means the service answered from another namespace: a CrossNamespaceError
        naming the marker (in a namespace the arm created for `unit`), or an unmapped
        item in a shared `namespace=` one, which holds every unit.
        """
        o, where = self.options, f"{self.backend.where} search"
        tag, shared = unit_tag(unit, self.nonce), self.options.namespace is not None
        raw = at(reply, o.results_path, where, f"arm_options.{self.name}.results_path")
        if not isinstance(raw, list):
            raise ContractError(
                f"contract mismatch at {where}: '{o.results_path}' is not a "
                f"list; fix arm_options.{self.name}.results_path"
            )
        items, unmapped = [], 0
        for entry in raw:
            text = str(at(entry, o.text_path, where, f"arm_options.{self.name}.text_path"))
            score = (
                at(entry, o.score_path, where, f"arm_options.{self.name}.score_path")
                if o.score_path
                else 0.0
            )
            if isinstance(score, bool) or not isinstance(score, int | float) or abs(score) > 1e300:
                raise ContractError(f"contract mismatch at {where}: '{o.score_path}' is "
                                    f"{str(score)[:40]!r}, not a number; fix "
                                    f"arm_options.{self.name}.score_path")  # fmt: skip
            markers = markers_of(entry, text, o.marker_path)
            found = [split_marker(m) for m in markers]
            foreign = [m for m, (t, _) in zip(markers, found, strict=True) if t != tag]
            if foreign and not shared:
                raise CrossNamespaceError(
                    f"retrieval health: {where} in namespace {namespace} (unit {unit!r}) "
                    f"returned an item marked {foreign[0][:80]!r}, not this unit's of this "
                    "run; the service answered from another namespace, so this retrieval "
                    "is not scored"
                )
            mine = (m for t, m in found if t is None or t == tag)
            ids = tuple(dict.fromkeys(m for m in mine if m in units or not units))
            unmapped += not ids
            shown = redact(MARKER.sub("", text))  # a service may echo a credential
            items.append(ContextItem(shown, float(score), ids, kind="memory"))
        return items, unmapped

    def _context(self, reply: Any, items: list[ContextItem]) -> str:
        if self.options.context_path:
            where = f"{self.backend.where} search"
            setting = f"arm_options.{self.name}.context_path"
            return redact(MARKER.sub("", str(at(reply, self.options.context_path, where, setting))))
        return "\n".join(["<MEMORIES>", *(f"- {i.text}" for i in items), "</MEMORIES>"])

    @property
    def requested_k(self) -> int:
        """Results asked for per search (retrieval health's hidden-cap rule)."""
        return self.options.k

    def probe_store(self, conversation: Conversation) -> StoreProbe | None:
        """After ingestion: search for a known ingested turn; how many items came back.

        Zero means the service accepted every write and can find none of it (retrieval
        health calls the arm degraded); the middle turn is the query, asking for `k`.
        """
        turns = conversation.turns()
        namespace = self._namespaces.get(conversation.conversation_id)
        if not turns or namespace is None:
            return None
        reply = self.backend.search(namespace, turns[len(turns) // 2].text, self.options.k)
        units = self._turn_ids.get(conversation.conversation_id, set())
        items, _ = self._items(reply, units, conversation.conversation_id, namespace)
        return StoreProbe(len(items), "recall")

    def close(self) -> None:
        """Delete the namespaces this run created (with `cleanup`), then disconnect."""
        try:
            if self.options.cleanup and self.backend.breaker.is_open:
                log.warning(
                    "arm %s: its circuit breaker is open (a service not answering, or a "
                    "foreign namespace); its namespaces stay listed in state.json for "
                    "the next run or bench.cleanup",
                    self.name,
                )
            elif self.options.cleanup:  # only what this process created
                mine = this_process()
                delete_recorded(
                    self.name, self.backend, self.ledger, self.options, lambda n: n.owner == mine
                )
        finally:
            self.backend.close()


def reconnect_and_delete(
    name: str,
    options: LiveOptions,
    ledger: NamespaceLedger,
    make_backend: Callable[[str, Any], Backend],
) -> int:
    """bench.cleanup's hook: connect with the command's options, delete what is listed.

    `options` come from the command's configuration, never from `state.json`; every
    namespace is checked to be this run's before it is deleted (arms/live_owner.py).
    """
    backend = make_backend(name, options)
    try:
        recorded = next((arm.endpoint for arm in ledger.arms() if arm.name == name), "")
        if recorded and endpoint_hash(backend.where) != recorded:
            raise ConfigError(
                f"arm_options.{name}: {backend.where} is not the endpoint the "
                f"run in {ledger.path} used; pass the run's arm_options.{name} "
                "(base_url, url or command)"
            )
        return delete_recorded(name, backend, ledger, options)
    finally:
        backend.close()
