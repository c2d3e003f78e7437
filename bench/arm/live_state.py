"""`<out>/state.json`: the namespaces a live arm created in a memory service.

A live arm (`http`, `mcp`) records each namespace here *before* its first write into
it and removes it after deleting it, so a run killed at any point leaves a complete
list of what it created. The next run of that arm, or `python -m bench.cleanup <out>`,
deletes the leftovers. Only namespaces this run created are listed; an existing
namespace passed by `namespace=<id>` is never recorded, so it is never deleted.

The file holds only what the run created, never how to reach or authorise: the run's
`nonce` (random, made once per run directory and kept by every resume), each arm's
kind and a hash of the endpoint it used (`endpoint`, to tell a cleanup pointed
elsewhere), and the namespaces with the `name` each was created under
(`namespace_name`: it echoes the nonce). The service URL, the token variable and the
request templates come from the command's configuration, as for a resume
(`bench.cleanup`); options that files of earlier versions kept are never read.
Writes are atomic and serialised by an exclusive `flock` on `.state.json.lock`, across
threads and processes: several arms, and `workers=N` processes, share the file.

Each namespace records its `owner` (`host:pid` of the process that created it). An arm
deletes on close only what its own process created, and at start only namespaces whose
owner process is gone (a killed earlier run) — never those of a sibling worker still
using them.

A namespace id comes from the service, so it is untrusted: `checked_namespace` accepts
only a short id of a safe charset (never `/`, `..`, `%`, `?`, `#` or a scheme) before it
is used in a request or recorded, `add` refuses an id already in use by another unit
of the run, and every id read back from the file is checked again, so a hand-edited
entry such as `zz/../other` is refused in one line before anything is sent.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import secrets
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.errors import BenchError
from bench.files import write_json_atomic
from bench.untrusted import read_json_object

STATE_FILE = "state.json"
_LOCK = threading.Lock()
NAMESPACE_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,127}")
"""A namespace id the harness will use: 1-128 of `A-Z a-z 0-9 _ . -`, not starting with
`.`, and never containing `..` (so never a path step, a query, a fragment or a URL)."""


NONCE = re.compile(r"[0-9a-f]{32}")
"""A run nonce: 32 lower-case hex digits (`secrets.token_hex(16)`)."""


class NamespaceError(BenchError):
    """A namespace id handed back by a service (or read from state.json) is unusable."""


def checked_namespace(value: object, where: str) -> str:
    """`value` as a namespace id, or NamespaceError naming `where` and the value.

    Accepted: a string matching `NAMESPACE_ID` without `..`, or a non-negative integer
    (services that number their namespaces), as its decimal string. Refused: null,
    booleans, other types, the empty string, `/`, `..`, `%`, whitespace and anything
    longer than 128 characters.
    """
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 10**18:
        value = str(value)
    if isinstance(value, str) and NAMESPACE_ID.fullmatch(value) and ".." not in value:
        return value
    shown = repr(value) if len(repr(value)) <= 80 else repr(value)[:77] + "..."
    raise NamespaceError(
        f"{where}: namespace id {shown} is not a safe id (1-128 of A-Z a-z 0-9 _ . -, "
        "no '..'); the service must return a plain id"
    )


@dataclass(frozen=True)
class Namespace:
    """One namespace created by a live arm for one unit (conversation, question, suite)."""

    arm: str
    """Name of the live arm that created the namespace."""
    namespace: str
    """The service's id for the namespace (what delete is called with)."""
    unit: str
    """The unit it was created for (conversation id, `probe`); '' when unrecorded."""
    owner: str = ""
    """`host:pid` of the process that created it; '' in files of earlier versions."""
    name: str = ""
    """The name it was created under (`namespace_name`); '' in files of earlier versions,
    which no cleanup can prove is this run's, so none deletes it."""


def namespace_name(arm: str, unit: str, nonce: str) -> str:
    """The name a live arm creates a namespace under: `armbench <arm> <unit> <nonce>`.

    It echoes the run's nonce, so the service's own listing tells a namespace this run
    created from any other (`arms/live_owner.py` checks it before a write or a delete).
    """
    return f"armbench {arm} {unit} {nonce}"


def endpoint_hash(where: str) -> str:
    """16 hex of SHA-256 of an endpoint (`Backend.where`): which service, not how to reach it."""
    return hashlib.sha256(where.encode("utf-8")).hexdigest()[:16]


def this_process() -> str:
    """The `owner` value of namespaces created by this process (`host:pid`)."""
    return f"{socket.gethostname()}:{os.getpid()}"


def owner_gone(owner: str) -> bool:
    """True when `owner` is a process of this host that no longer runs (or is unknown).

    Owners on other hosts (Ray nodes) are never judged gone from here; `bench.cleanup`
    deletes everything listed regardless.
    """
    host, _, pid = owner.rpartition(":")
    if not owner or not pid.isdigit():
        return True
    if host != socket.gethostname():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


@dataclass(frozen=True)
class LiveArm:
    """A live arm as recorded for cleanup: its kind and which endpoint it used."""

    name: str
    """The arm's name in the run config (key of `arm_options`)."""
    kind: str
    """The arm's transport kind: `http` or `mcp`."""
    endpoint: str = ""
    """`endpoint_hash` of the service it used; '' in files of earlier versions."""
    legacy_options: bool = False
    """True when the file (of an earlier version) still holds the arm's options: ignored."""


class NamespaceLedger:
    """Read-modify-write access to `<run_dir>/state.json`."""

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / STATE_FILE

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """Exclusive access for one read-modify-write, across threads and processes."""
        with _LOCK, open(self.path.with_name(f".{STATE_FILE}.lock"), "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _read(self) -> dict[str, Any]:
        if not self.path.exists() and not self.path.is_symlink():
            return {"arms": {}, "namespaces": []}
        data = read_json_object(self.path, fix="fix or delete it")
        data.setdefault("arms", {})
        data.setdefault("namespaces", [])
        if not isinstance(data["arms"], dict) or not isinstance(data["namespaces"], list):
            raise BenchError(
                f"{self.path}: 'arms' must be an object and 'namespaces' a list; fix or delete it"
            )
        for name, spec in data["arms"].items():
            if not isinstance(spec, dict) or not all(
                isinstance(spec.get(k, ""), str) for k in ("kind", "endpoint")
            ):
                raise BenchError(
                    f"{self.path}: arms.{name} is not an object of strings "
                    "(kind, endpoint); fix or delete it"
                )
        nonce = data.get("nonce")
        if nonce is not None and not (isinstance(nonce, str) and NONCE.fullmatch(nonce)):
            raise BenchError(
                f"{self.path}: 'nonce' is not 32 lower-case hex digits; fix or delete it"
            )
        return data

    def _entries(self, data: dict[str, Any]) -> list[Namespace]:
        """Every listed namespace, each field type-checked and each id checked again."""
        entries = []
        for index, n in enumerate(data["namespaces"]):
            where = f"{self.path}: namespaces[{index}]"
            fields = ("arm", "namespace", "unit", "owner", "name")
            if (
                not isinstance(n, dict)
                or not all(isinstance(n.get(f, ""), str) for f in fields)
                or not isinstance(n.get("arm"), str)
            ):
                raise BenchError(
                    f"{where} is not an object of strings (arm, namespace, "
                    "unit, owner, name); fix or delete it"
                )
            namespace = checked_namespace(n.get("namespace"), where)
            entries.append(
                Namespace(
                    n["arm"], namespace, n.get("unit", ""), n.get("owner", ""), n.get("name", "")
                )
            )
        return entries

    def register_arm(self, arm: LiveArm) -> str:
        """Record an arm's kind and endpoint (before it creates anything); the run's nonce.

        The nonce is made here the first time (under the lock, so every worker process
        of a run gets the same one) and kept by every later session of the run.
        Options an earlier version recorded for the arm are dropped, never used.
        """
        with self._locked():
            data = self._read()
            data.setdefault("nonce", secrets.token_hex(16))
            data["arms"][arm.name] = {"kind": arm.kind, "endpoint": arm.endpoint}
            write_json_atomic(self.path, data)
            return str(data["nonce"])

    def nonce(self) -> str | None:
        """The run's nonce; None when no live arm ever registered (files of earlier versions)."""
        value = self._read().get("nonce")
        return str(value) if value is not None else None

    def add(self, entry: Namespace) -> None:
        """Record a created namespace; call before the first write into it."""
        with self._locked():
            data = self._read()
            for known in self._entries(data):
                if (known.arm, known.namespace) == (entry.arm, entry.namespace):
                    raise NamespaceError(
                        f"arm {entry.arm}: the service returned namespace id "
                        f"{entry.namespace!r} for unit {entry.unit!r}, already in use for "
                        f"unit {known.unit!r}; each unit needs its own namespace"
                    )
            data["namespaces"].append(
                {
                    "arm": entry.arm,
                    "namespace": entry.namespace,
                    "unit": entry.unit,
                    "owner": entry.owner,
                    "name": entry.name,
                }
            )
            write_json_atomic(self.path, data)

    def remove(self, entry: Namespace) -> None:
        """Forget a namespace once it is deleted."""
        with self._locked():
            data = self._read()
            data["namespaces"] = [
                n
                for n in data["namespaces"]
                if (n.get("arm"), n.get("namespace")) != (entry.arm, entry.namespace)
            ]
            write_json_atomic(self.path, data)

    def arms(self) -> list[LiveArm]:
        """Every recorded live arm, by name."""
        data = self._read()
        return [
            LiveArm(name, str(spec.get("kind")), str(spec.get("endpoint", "")), "options" in spec)
            for name, spec in sorted(data["arms"].items())
        ]

    def namespaces(self, arm: str | None = None) -> list[Namespace]:
        """Recorded namespaces (of one arm, or all), in creation order."""
        return [n for n in self._entries(self._read()) if arm is None or n.arm == arm]
