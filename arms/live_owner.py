"""Is a namespace this run's? Asked of the service before the first write and every delete.

A create reply and a `state.json` entry are both untrusted: a service (or a proxy in
front of it) may answer a create with the id of a project that already holds someone's
data, and a hand-edited `state.json` may list any id. The harness creates every
namespace under `namespace_name(arm, unit, nonce)` (bench/arm/live_state.py), a name
that echoes the run's random nonce, and then asks the service:

* **After a create, before the first write** (`check_new`): the service's listing
  (`list_path`, `list_id_path`, `list_name_path`; `GET /v1/projects` or the MCP
  `list_projects` tool) must show the returned id under the name just sent. A contract
  without a listing (`list_path: null`) must find the namespace empty instead. Anything
  else is a `ForeignNamespace`: the arm stops (its circuit breaker opens, so every later
  call fails at once), and nothing is written into the namespace or deleted from it.
* **Before a delete** (`delete_recorded`): the entry's recorded name must be
  `namespace_name` of its arm and unit with this run's nonce, and the listing must show
  the id under that name (without a listing: every item a search returns carries this
  run's marker for the unit). Every listed entry of the arm is checked before the first
  delete; one that fails is a `ForeignNamespace` and nothing of that arm is deleted. An id
  the listing lacks is already gone: it leaves `state.json` with no request sent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from arms.live_calls import CircuitBreaker
from arms.live_markers import split_marker, unit_tag
from arms.live_replies import ContractError, at, lookup, markers_of
from bench.arm.live_state import Namespace, NamespaceLedger, namespace_name

CHECK_QUERY = "armbench namespace check"
"""The query of the search that stands in for a listing (`list_path: null`)."""


class ForeignNamespace(ContractError):
    """The service's namespace is not one this run created: never written, never deleted."""


class Lister(Protocol):
    """What the checks need of a backend: its listing, a search, its name and breaker."""

    where: str
    breaker: CircuitBreaker

    def names(self) -> dict[str, str] | None:
        """Every namespace the service lists, id -> name; None without a listing."""
        ...

    def search(self, namespace: str, query: str, k: int) -> Any:
        """The raw search reply for `query` (top `k`)."""
        ...

    def delete(self, namespace: str) -> None:
        """Delete a namespace (already gone counts as deleted)."""
        ...


class ListingOptions(Protocol):
    """The reply paths and `k` of a live arm's options (`arms.live.LiveOptions`) read here."""

    k: int
    """Results asked for per search."""
    results_path: str
    """Dotted path to the list of items in a search reply."""
    text_path: str
    """Dotted path to an item's text."""
    marker_path: str | None
    """Dotted path to an item's unit marker(s); None reads them from the text."""
    list_path: str | None
    """Dotted path to the list of namespaces in a listing reply."""
    list_id_path: str
    """Dotted path to a namespace's id within one listing entry."""
    list_name_path: str
    """Dotted path to a namespace's name within one listing entry."""


def listed_names(reply: object, options: ListingOptions, where: str, arm: str) -> dict[str, str]:
    """The listing reply as id -> name, read at the options' `list_*` paths."""
    if options.list_path is None:  # the callers ask for a listing only with a list_path
        raise ContractError(f"{where}: no list_path to read; fix arm_options.{arm}.list_path")
    rows = at(reply, options.list_path, where, f"arm_options.{arm}.list_path")
    if not isinstance(rows, list):
        raise ContractError(
            f"contract mismatch at {where}: '{options.list_path}' is not a "
            f"list; fix arm_options.{arm}.list_path"
        )
    names = {}
    for row in rows:
        ident = at(row, options.list_id_path, where, f"arm_options.{arm}.list_id_path")
        name = at(row, options.list_name_path, where, f"arm_options.{arm}.list_name_path")
        names[str(ident)] = str(name)
    return names


def _markers(backend: Lister, options: ListingOptions, namespace: str) -> list[str]:
    """Every marker of every item a search of `namespace` returns."""
    reply = backend.search(namespace, CHECK_QUERY, options.k)
    raw = at(reply, options.results_path, f"{backend.where} search", "results_path")
    found: list[str] = []
    for entry in raw if isinstance(raw, list) else []:
        text = str(lookup(entry, options.text_path) or "")
        found.extend(markers_of(entry, text, options.marker_path))
    return found


def check_new(
    backend: Lister, options: ListingOptions, namespace: str, name: str, where: str
) -> None:
    """ForeignNamespace (the arm's breaker opened) unless `namespace` is the one just made."""
    listed = backend.names()
    if listed is not None:
        seen = listed.get(namespace)
        if seen == name:
            return
        problem = (
            f"the service lists it as {seen[:80]!r}"
            if seen is not None
            else "the service does not list it"
        )
    else:
        markers = _markers(backend, options, namespace)
        if not markers:
            return
        problem = f"it already holds items (marker {markers[0][:80]!r})"
    backend.breaker.trip(f"a create reply named an existing namespace ({namespace})")
    raise ForeignNamespace(
        f"{where}: namespace {namespace!r} is not the one just created under {name!r}: "
        f"{problem}; nothing was written into it or deleted, and the arm stops (fix the "
        "service's create reply)"
    )


def _owned(
    entry: Namespace,
    nonce: str | None,
    listed: dict[str, str] | None,
    backend: Lister,
    options: ListingOptions,
) -> bool:
    """True when `entry` is this run's and still there; False when gone; else ForeignNamespace."""
    where = f"state.json: namespace {entry.namespace!r} of arm {entry.arm}"
    if nonce is None or entry.name != namespace_name(entry.arm, entry.unit, nonce):
        raise ForeignNamespace(
            f"{where}: its recorded name {entry.name[:80]!r} is not one this run created "
            "(no name, or not this run's nonce); nothing deleted: delete it by hand if it "
            "is yours and remove the entry"
        )
    if listed is not None:
        if entry.namespace not in listed:
            return False
        if listed[entry.namespace] == entry.name:
            return True
        raise ForeignNamespace(
            f"{where}: the service lists it as {listed[entry.namespace][:80]!r}, not as "
            f"{entry.name!r}; nothing deleted (it is not this run's namespace)"
        )
    tag = unit_tag(entry.unit, nonce)
    foreign = [m for m in _markers(backend, options, entry.namespace) if split_marker(m)[0] != tag]
    if foreign:
        raise ForeignNamespace(
            f"{where}: it holds an item marked {foreign[0][:80]!r}, not this run's; "
            "nothing deleted (it is not this run's namespace)"
        )
    return True


def delete_recorded(
    arm: str,
    backend: Lister,
    ledger: NamespaceLedger,
    options: ListingOptions,
    which: Callable[[Namespace], bool] = lambda entry: True,
) -> int:
    """Delete the namespaces `ledger` lists for `arm` (those `which` selects); how many.

    Every one is checked first (`_owned`); an entry the service no longer lists is
    removed from the ledger with nothing sent, and counts as deleted.
    """
    entries = [entry for entry in ledger.namespaces(arm) if which(entry)]
    if not entries:
        return 0
    nonce, listed = ledger.nonce(), backend.names()
    present = [_owned(entry, nonce, listed, backend, options) for entry in entries]
    for entry, there in zip(entries, present, strict=True):
        if there:
            backend.delete(entry.namespace)
        ledger.remove(entry)
    return len(entries)
