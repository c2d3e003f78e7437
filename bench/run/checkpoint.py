"""Ingestion checkpoints: a store is reused only when its fingerprint matches exactly.

The fingerprint must name everything that changes what ingestion builds: arm params,
embedder and extractor models, the armbench version and the arm's code hash. A store
half-built under one fingerprint is never finished under another (methodology §7.6).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

from bench.hashing import stable_hash
from bench.records import write_json_atomic

_FILE = "checkpoint.json"


def source_hash(*modules: Any) -> str:
    """Hash of the source files of the given modules (the arm's code version)."""
    digest = hashlib.sha256()
    for module in modules:
        digest.update(Path(module.__file__).read_bytes())
    return digest.hexdigest()[:16]


class IngestCheckpoint:
    """Progress marker of one (arm, conversation) store folder."""

    def __init__(self, store_dir: Path, fingerprint: dict[str, Any]) -> None:
        self.store_dir = store_dir
        self.fingerprint = fingerprint
        self.key = stable_hash(fingerprint)
        self._path = store_dir / _FILE

    def load(self) -> dict[str, Any] | None:
        """Saved progress when the fingerprint matches; wipe the folder and return None if not."""
        if not self._path.is_file():
            if self.store_dir.exists():
                shutil.rmtree(self.store_dir)  # a store without a checkpoint is unfinished junk
            return None
        saved = json.loads(self._path.read_text(encoding="utf-8"))
        if saved.get("key") != self.key:
            shutil.rmtree(self.store_dir)
            return None
        state: dict[str, Any] = saved.get("state", {})
        return state

    def save(self, state: dict[str, Any], *, complete: bool = False) -> None:
        """Record progress atomically (call after the store's own data is flushed)."""
        payload = {
            "key": self.key,
            "fingerprint": self.fingerprint,
            "complete": complete,
            "state": {**state, "complete": complete},
        }
        write_json_atomic(self._path, payload)
