"""`<out>/state.json`: the namespaces a live arm created in a memory service.

A live arm (`http`, `mcp`) records each namespace here *before* its first write into
it and removes it after deleting it, so a run killed at any point leaves a complete
list of what it created. The next run of that arm, or `python -m bench.cleanup <out>`,
deletes the leftovers. Only namespaces this run created are listed; an existing
namespace passed by `namespace=<id>` is never recorded, so it is never deleted.

The file also keeps each arm's kind and options (secrets are never in them: a token
is named by its environment variable), which is what cleanup needs to reconnect.
Writes are atomic and serialised by an exclusive `flock` on `.state.json.lock`, across
threads and processes: several arms, and `workers=N` processes, share the file.

Each namespace records its `owner` (`host:pid` of the process that created it). An arm
deletes on close only what its own process created, and at start only namespaces whose
owner process is gone (a killed earlier run) — never those of a sibling worker still
using them.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.errors import BenchError
from bench.records import write_json_atomic

STATE_FILE = "state.json"
_LOCK = threading.Lock()


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
    """A live arm as recorded for cleanup: its kind and its (secret-free) options."""

    name: str
    """The arm's name in the run config (key of `arm_options`)."""
    kind: str
    """The arm's transport kind: `http` or `mcp`."""
    options: dict[str, Any]
    """The arm's resolved options (`asdict` of its config); secret-free by design."""


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
        if not self.path.exists():
            return {"arms": {}, "namespaces": []}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise BenchError(f"{self.path}: unreadable ({exc}); fix or delete it") from None
        if not isinstance(data, dict):
            raise BenchError(f"{self.path}: not a JSON object; fix or delete it")
        data.setdefault("arms", {})
        data.setdefault("namespaces", [])
        return data

    def register_arm(self, arm: LiveArm) -> None:
        """Record an arm's kind and options (before it creates anything)."""
        with self._locked():
            data = self._read()
            data["arms"][arm.name] = {"kind": arm.kind, "options": arm.options}
            write_json_atomic(self.path, data)

    def add(self, entry: Namespace) -> None:
        """Record a created namespace; call before the first write into it."""
        with self._locked():
            data = self._read()
            data["namespaces"].append(
                {
                    "arm": entry.arm,
                    "namespace": entry.namespace,
                    "unit": entry.unit,
                    "owner": entry.owner,
                }
            )
            write_json_atomic(self.path, data)

    def remove(self, entry: Namespace) -> None:
        """Forget a namespace once it is deleted."""
        with self._locked():
            data = self._read()
            data["namespaces"] = [
                n for n in data["namespaces"]
                if (n.get("arm"), n.get("namespace")) != (entry.arm, entry.namespace)
            ]  # fmt: skip
            write_json_atomic(self.path, data)

    def arms(self) -> list[LiveArm]:
        """Every recorded live arm, by name."""
        data = self._read()
        return [
            LiveArm(name, str(spec.get("kind")), dict(spec.get("options") or {}))
            for name, spec in sorted(data["arms"].items())
        ]

    def namespaces(self, arm: str | None = None) -> list[Namespace]:
        """Recorded namespaces (of one arm, or all), in creation order."""
        return [
            Namespace(
                str(n["arm"]), str(n["namespace"]), str(n.get("unit", "")), str(n.get("owner", ""))
            )
            for n in self._read()["namespaces"]
            if arm is None or n.get("arm") == arm
        ]
