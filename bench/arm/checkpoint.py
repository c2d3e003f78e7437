"""Ingestion checkpoints: a store is reused only when its fingerprint matches exactly.

The fingerprint must name everything that changes what ingestion builds: arm params,
embedder and extractor models, the armbench version and the arm's code hash. A store
half-built under one fingerprint is never finished under another (methodology §7.6).
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import shutil
import sys
from pathlib import Path
from typing import Any

from bench.files import write_json_atomic
from bench.hashing import stable_hash
from bench.paths import contained
from bench.untrusted import UntrustedJSONError, read_json

log = logging.getLogger("bench.run")

_FILE = "checkpoint.json"


def source_hash(*modules: str) -> str:
    """Hash of the source files of the named modules (the arm's code version)."""
    digest = hashlib.sha256()
    for name in modules:
        digest.update(module_file(name).read_bytes())
    return digest.hexdigest()[:16]


def module_file(name: str) -> Path:
    """The source file of module `name`, without importing it.

    An imported module answers with its own `__file__`; otherwise the import system's
    finder says where it would load it from. Hashing must not import: the engine's
    modules include the LanceDB hot store, whose pyarrow imports cost about 0.2 s in
    every read-only suite or screen that never touches LanceDB.
    """
    where = getattr(sys.modules.get(name), "__file__", None)
    if where is None:
        spec = importlib.util.find_spec(name)
        where = spec.origin if spec is not None else None
    if where is None:
        raise ValueError(f"no source file for module {name} (code hash)")
    return Path(where)


class IngestCheckpoint:
    """Progress marker of one (arm, conversation) store folder."""

    def __init__(
        self, store_dir: Path, fingerprint: dict[str, object], *, root: Path | None = None
    ) -> None:
        """`root`: the folder `store_dir` must stay inside (the arm's store folder).

        Without it, `store_dir`'s parent is used, which checks nothing about the name
        itself: arms pass their `services.store_dir`.
        """
        self.store_dir = store_dir
        self.root = root if root is not None else store_dir.parent
        self.fingerprint = fingerprint
        self.key = stable_hash(fingerprint)
        self._path = store_dir / _FILE

    def load(self) -> dict[str, Any] | None:
        """Saved progress when the fingerprint matches; wipe the folder and return None if not.

        A checkpoint that does not parse is treated like a missing one (the store is
        rebuilt from zero, with one log line), never trusted and never an error.
        """
        if not self._path.is_file():
            if self.store_dir.exists():
                self.wipe("no checkpoint")  # a store without a checkpoint is unfinished junk
            return None
        try:
            saved = read_json(self._path)
        except UntrustedJSONError as exc:
            self.wipe(f"checkpoint does not parse ({exc.what})")
            return None
        if not isinstance(saved, dict) or not isinstance(saved.get("state", {}), dict):
            self.wipe("checkpoint is not an object")
            return None
        if saved.get("key") != self.key:
            shutil.rmtree(contained(self.store_dir, self.root))
            return None
        state: dict[str, Any] = saved.get("state", {})
        return state

    def wipe(self, why: str) -> None:
        """Delete the store folder (checked to lie inside `root`) and log why, once."""
        target = contained(self.store_dir, self.root)
        log.warning("store %s: %s; rebuilding it from zero", self.store_dir, why)
        shutil.rmtree(target, ignore_errors=False)

    def save(self, state: dict[str, object], *, complete: bool = False) -> None:
        """Record progress atomically (call after the store's own data is flushed)."""
        payload = {
            "key": self.key,
            "fingerprint": self.fingerprint,
            "complete": complete,
            "state": {**state, "complete": complete},
        }
        write_json_atomic(contained(self._path, self.root), payload)
