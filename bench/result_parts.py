"""The typed parts of an arm's result that records keep as objects of integers.

A call's token `Usage` (`usage_dict`), an arm's extraction `Health` on a conversation and
one query's `QueryHealth` are typed in memory and written exactly as the plain dicts
records have always held, so files on disk do not change. A reader takes a part back only
when writing it again gives the same object (`exact`): nothing in a record file is
silently dropped or altered. Standard library only (the summariser reads `Health` too).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, TypeVar

from bench.types import Usage

_P = TypeVar("_P")
MAX_FAILED_SHARE = 0.10
"""Above this share of failed exchanges an arm's extraction is degraded."""
MAX_DUPLICATE_SHARE = 0.25
"""Above this share of stored facts repeated within their exchange, extraction is degraded."""
MAX_UNGROUNDED_SHARE = 0.25
"""Above this share of stored facts not grounded in their exchange, extraction is degraded."""
MODE_KEYS = ("via_tools", "via_json_schema", "tools_ignored")
"""`Health`'s extraction-mode counts, written all three when any is set."""
QUALITY_KEYS = ("duplicate", "ungrounded")
"""`Health`'s suspect-fact counts, each written when non-zero."""


def usage_dict(usage: Usage) -> dict[str, int]:
    """One call's usage as records and the cache store it.

    `reasoning_tokens` appears only when non-zero, so an ordinary model's usage is
    written exactly as before it existed.
    """
    out = {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens}
    if usage.reasoning_tokens:
        out["reasoning_tokens"] = usage.reasoning_tokens
    return out


@dataclass(frozen=True)
class Health:
    """One arm's extraction over one conversation (bench.scoring.health reads and sums it)."""

    exchanges: int
    """Exchanges the extractor was asked about."""
    failed: int
    """Exchanges whose extraction had an error (failed call, no tool call, bad JSON, ...)."""
    facts: int
    """Facts in the store after ingestion."""
    via_tools: int = 0
    """Exchanges asked with an `update_memory` tool call (LLM extractor)."""
    via_json_schema: int = 0
    """Exchanges asked as JSON constrained by a JSON Schema (LLM extractor)."""
    tools_ignored: int = 0
    """Tool requests the server answered with free text and no tool call."""
    duplicate: int = 0
    """Facts repeating an earlier fact of the same exchange."""
    ungrounded: int = 0
    """Facts whose content words mostly do not occur in their exchange."""

    @property
    def mode(self) -> str:
        """Which extraction mode was used: `tools`, `json_schema`, `tools+json_schema`, or ``."""
        used = [
            m for m, n in (("tools", self.via_tools), ("json_schema", self.via_json_schema)) if n
        ]
        return "+".join(used)

    @property
    def degraded(self) -> bool:
        """True when too many exchanges failed, nothing was stored or too many facts are suspect."""
        if self.exchanges <= 0:
            return False
        if self.failed / self.exchanges > MAX_FAILED_SHARE or self.facts == 0:
            return True
        return (
            self.duplicate / self.facts > MAX_DUPLICATE_SHARE
            or self.ungrounded / self.facts > MAX_UNGROUNDED_SHARE
        )

    def to_json(self) -> dict[str, int]:
        """The plain form kept in records and run.json (mode and quality counts when set)."""
        out = {"exchanges": self.exchanges, "failed": self.failed, "facts": self.facts}
        modes = {k: getattr(self, k) for k in MODE_KEYS}
        out = out | modes if any(modes.values()) else out
        return out | {k: n for k in QUALITY_KEYS if (n := getattr(self, k))}


def _ints(data: dict[str, Any], keys: tuple[str, ...]) -> list[int] | None:
    """The values of `keys` when each is an int (0 when absent from `data`)."""
    values = [data.get(k, 0) for k in keys]
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return None
    return values


def health_from(data: Any, counts: tuple[str, ...], quality: tuple[str, ...]) -> Health | None:
    """A `Health` from the ints of `data`, None when it holds none such.

    `counts` names exchanges, failed and facts (all required), `quality` duplicate and
    ungrounded (0 when absent), so run.json's form and an arm's stats share one reading.
    """
    if not isinstance(data, dict):
        return None
    values = [data.get(k) for k in counts]
    modes, found = _ints(data, MODE_KEYS), _ints(data, quality)
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in values) or modes is None:
        return None
    return Health(*values, *modes, *(found or (0, 0)))  # type: ignore[arg-type]


def health_from_json(data: Any) -> Health | None:
    """A `Health` from its plain form (`Health.to_json`), None when it is not one."""
    return health_from(data, ("exchanges", "failed", "facts"), QUALITY_KEYS)


@dataclass(frozen=True)
class QueryHealth:
    """One query's retrieval health, as its result's record keeps it (`ArmResult.retrieval`).

    A successful query writes `items` (with `empty` when it returned nothing and
    `requested_k` when the arm asks for a k); a failed one writes `failed` and `timed_out`.
    The run sums these into `bench.scoring.retrieval_health.RetrievalHealth`.
    """

    items: int = 0
    """Items the query returned (0 for a failed query)."""
    empty: int = 0
    """1 when it returned no item and no text."""
    requested_k: int | None = None
    """The k the arm asked for; None when the arm has no such setting."""
    failed: int = 0
    """1 when the retrieval raised."""
    timed_out: int = 0
    """1 when the failed retrieval's error names a timeout."""

    def to_json(self) -> dict[str, int]:
        """`{"items": n[, "empty": 1][, "requested_k": k]}` or `{"failed": 1, "timed_out": t}`."""
        if self.failed:
            return {"failed": self.failed, "timed_out": self.timed_out}
        out = {"items": self.items} | ({"empty": self.empty} if self.empty else {})
        return out | ({"requested_k": self.requested_k} if self.requested_k is not None else {})


def _keyed(cls: type[_P], data: dict[str, int]) -> _P | None:
    """`cls(**data)` when every key of `data` is a field of `cls`, else None."""
    names = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    return cls(**data) if data.keys() <= names else None


def exact(name: str, data: Any, made: _P | None, plain: Callable[[_P], dict[str, int]]) -> _P:
    """`made`, when writing it back (`plain`) gives `data` again; else TypeError naming `name`."""
    if made is None or plain(made) != data:
        shown = repr(data)
        shown = shown if len(shown) <= 40 else shown[:37] + "..."
        raise TypeError(f"{name} is {shown}, not as armbench writes it")
    return made


def read_usage(data: dict[str, int]) -> Usage | None:
    """A record's `usage` (`{}`: none reported, None); TypeError for any other object."""
    return exact("usage", data, _keyed(Usage, data), usage_dict) if data else None


def read_health(data: dict[str, int]) -> Health | None:
    """A record's `extraction` (`{}`: None); TypeError for an object it would not write."""
    return exact("extraction", data, health_from_json(data), Health.to_json) if data else None


def read_query(data: dict[str, int]) -> QueryHealth | None:
    """A record's `retrieval` (`{}`: None); TypeError for an object it would not write."""
    return (
        exact("retrieval", data, _keyed(QueryHealth, data), QueryHealth.to_json) if data else None
    )


def plain_parts(
    usage: Usage | None, extraction: Health | None, retrieval: QueryHealth | None
) -> dict[str, Any]:
    """A result's typed parts as its JSON holds them: usage `{}` when None, health omitted."""
    return {
        "usage": usage_dict(usage) if usage else {},
        "extraction": extraction.to_json() if extraction else None,
        "retrieval": retrieval.to_json() if retrieval else None,
    }
