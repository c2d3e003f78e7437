"""A run with `out=s3://...`: which files each process pulls and pushes, and when.

The run directory is staged in a local folder (`bench.remote.uri.staging_dir`) and
every stage of the pipeline works on that folder exactly as on a local `out`:

- at start, the driver (or each shard process) pulls the top-level files (run.json,
  cache) and the records and stores of its own units;
- every unit (conversation; LongMemEval question) runs through `run_unit` (a Ray task,
  or a spawned child even with `workers=1`): it pulls the unit into its own node's
  staging folder (a node needs no shared filesystem), runs it, closes its stores
  (SQLite folds its WAL into the file) and pushes the unit's stores, then its records
  (`bench.remote.mirror` orders them so the commit points land last);
- at the end the driver pushes the top-level files (run.json, the response cache,
  SUMMARY.md, MANIFEST.json).

Stores (SQLite archives, checkpoints and LanceDB hot tables alike) are staged, not
opened on S3: a neuromorphic store's checkpoint, archive and `hot.lance` are checked
against each other, and uploading the three together after the conversation keeps that
check meaningful, while a LanceDB table on `s3://` would put a network round trip in
every hot search (and in `retrieve_ms`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from bench.config import RunConfig
from bench.paths import safe_name
from bench.remote.mirror import Mirror, Scope
from bench.remote.uri import is_remote, parse_s3, staging_dir
from bench.types import Conversation

log = logging.getLogger("bench.run")
TOP = Scope(top=True)
"""Every top-level file: run.json, cache/, SUMMARY.md, MANIFEST.json, report.html."""


class Unit(Protocol):
    """What staging reads of a unit of work (`bench.run.scale.units.Unit` is one)."""

    @property
    def unit_id(self) -> str:
        """The unit's id: its store folder name (after `safe_name`)."""
        ...

    @property
    def conversation(self) -> Conversation:
        """The conversation whose question records the unit writes."""
        ...


def stage(cfg: RunConfig) -> RunConfig:
    """For `out=s3://...`, the config that runs in the staging folder (`s3.uri` set)."""
    if not is_remote(cfg.out):
        return cfg
    uri = parse_s3(cfg.out)
    local = staging_dir(uri, cfg.s3.cache_dir)
    log.info("out=%s is staged in %s", uri, local)
    return replace(cfg, out=str(local), s3=replace(cfg.s3, uri=str(uri)))


def local_run_dir(cfg: RunConfig, run_dir: str) -> str:
    """The run folder on this machine: the node's own staging folder for a remote run."""
    if cfg.s3.uri is None:
        return run_dir
    return str(staging_dir(parse_s3(cfg.s3.uri), cfg.s3.cache_dir))


@dataclass
class RemoteRun:
    """One process's view of a remote run: its mirror and the arms whose stores it syncs."""

    mirror: Mirror
    """The staging folder and its S3 copy."""
    arms: tuple[str, ...]
    """Requested arm names (their store folders are `stores/<arm>/<unit>/`)."""

    def unit_scope(self, unit: Unit) -> Scope:
        """A unit's question records and its store folder in every arm."""
        questions = unit.conversation.questions
        stems = {q.file_stem for q in questions} | {q.legacy_file_stem for q in questions}
        folder = safe_name(unit.unit_id)
        return Scope(
            files=frozenset(f"questions/{stem}.json" for stem in stems),
            folders=tuple(f"stores/{safe_name(arm)}/{folder}/" for arm in self.arms),
        )

    def pull_start(self, units: Sequence[Unit]) -> None:
        """Before any work: the top-level files and this process's units."""
        fetched = self.mirror.pull(TOP)
        for unit in units:
            fetched += self.mirror.pull(self.unit_scope(unit))
        log.info("pulled %d file(s) from %s", fetched, self.mirror.uri)

    def pull_unit(self, unit: Unit) -> None:
        """A task's start: its unit as the remote has it (records and stores)."""
        self.mirror.pull(self.unit_scope(unit))

    def push_unit(self, unit: Unit) -> None:
        """A unit has finished and its stores are closed: push its stores, then records."""
        sent = self.mirror.push(self.unit_scope(unit))
        log.info("unit %s: pushed %d file(s) to %s", unit.unit_id, sent, self.mirror.uri)

    def push_top(self) -> None:
        """The end of the run: every changed top-level file."""
        self.mirror.push(TOP)


def remote_run(cfg: RunConfig) -> RemoteRun | None:
    """The remote run of a staged config (None for a local `out`)."""
    if cfg.s3.uri is None:
        return None
    local = Path(local_run_dir(cfg, cfg.out))
    return RemoteRun(Mirror(parse_s3(cfg.s3.uri), local, cfg.s3.endpoint_url), tuple(cfg.arms))
