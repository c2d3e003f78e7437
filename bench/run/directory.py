"""The run directory: run.json identity checks, resumable question records."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import asdict, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.config import Endpoint, RunConfig
from bench.errors import BenchError, ConfigError, DatasetError
from bench.files import write_json_atomic
from bench.hashing import stable_hash
from bench.ledger import append_writes
from bench.paths import contained
from bench.providers.secrets import redact_value
from bench.records import QuestionRecord, read_record, record_path, write_record
from bench.run.provenance import provenance, secret_values
from bench.runmeta import ProvenanceMeta, RunMeta, read_run_meta
from bench.scoring.rules import Outcome
from bench.types import Question
from bench.verify.journal import note_record

PREDICTIONS = "predictions"  # a `phase=predict` session's results (bench.run.phases)
# Identity keys: a run directory only ever holds answers produced under these values.
_IDENTITY_KEYS = (
    "dataset_sha256",
    "prompt_sha256",
    "answerer",
    "extractor",
    "embedder",
    "answer_settings",
    "outcome",
    "errata_sha256",
    "dataset_seed",
)
_THRESHOLD_KEY = "scoring.f1_threshold"
"""The threshold's fingerprint key: the config path a user changes, as errors name it."""
_ARM_PREFIX = "arm_options."
"""Arm options are fingerprinted per arm (`arm_options.<arm>`): runs add arms."""
_MALFORMED_ARMS = "arm_options"
"""The fingerprint key of arm options that are no per-arm mapping (always a change)."""
_MODEL_KEYS = ("answerer", "extractor", "embedder")
"""Identity keys a record keeps readable (model ids), besides their fingerprints."""


def key_env_names(cfg: RunConfig) -> list[str]:
    """Every environment variable named as holding a key (their values are scrubbed)."""
    p = cfg.provider
    endpoints: list[Endpoint] = [p.answerer, p.extractor, p.embedder]
    endpoints += [j.endpoint for j in cfg.judges]
    return [e.api_key_env for e in endpoints if e.api_key_env]


def identity(
    cfg: RunConfig, dataset_sha256: str, prompt_sha256: str, errata_sha256: str | None = None
) -> dict[str, Any]:
    """What must not change between a run and its resumption (errata: the audit file's hash)."""
    p = cfg.provider
    seed = {} if cfg.dataset.seed is None else {"dataset_seed": cfg.dataset.seed}
    return {
        **seed,
        "dataset_sha256": dataset_sha256,
        "prompt_sha256": prompt_sha256,
        "answerer": f"{p.answerer.kind}:{p.answerer.base_url or ''}:{p.answerer.model}",
        "extractor": f"{p.extractor.kind}:{p.extractor.model}",
        "embedder": f"{p.embedder.kind}:{p.embedder.model}:{p.embedder.dim}",
        "answer_settings": {
            "max_context_tokens": cfg.answer.max_context_tokens,
            "temperature": p.answerer.temperature,
            "max_tokens": p.answerer.max_tokens,
            "answer_max_tokens": cfg.answer.max_tokens,
            "stop": list(cfg.answer.stop),
        },
        "outcome": outcome_rule(cfg),
        "arm_options": {name: cfg.arm_options[name] for name in cfg.arms},
        "f1_threshold": cfg.scoring.f1_threshold,
        "errata_sha256": errata_sha256,
    }


_SHAPE_KEYS = ("dataset_sha256", "prompt_sha256", "answerer", "extractor", "embedder", "outcome")
"""Identity keys every run.json `bench.run` has written holds, each a string."""


def identity_shaped(ident: object) -> bool:
    """Whether `ident` has the shape `identity` writes (every run.json since v0.1.0 does).

    A foreign object in its place (`{}`, `{"x": 1}`, keys of the wrong type) would
    otherwise pass the resume check (absent keys pass, for older identities) and vouch
    for records made under another configuration: it vouches for nothing instead, and
    every record is checked on its own fingerprint.
    """
    if not isinstance(ident, dict) or not isinstance(ident.get("arm_options"), dict):
        return False
    return all(isinstance(ident.get(key), str) for key in _SHAPE_KEYS)


def outcome_rule(cfg: RunConfig) -> str:
    """The name of the rule that sets `correct` (`bench.scoring.rules.Outcome`)."""
    return Outcome.for_scoring(cfg.scoring.primary_judge, cfg.scoring.f1_threshold).name


class RunDirectory:
    """One run's folder: `run.json`, `questions/`, `stores/`, `cache/`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.run_json = path / "run.json"
        self.record_provenance: dict[str, Any] = {}
        """Stamped on every record this process writes (set by `write_run_json`)."""
        self.records_written = 0
        """Records this process has written (run.json's provenance follows them)."""
        self._verify_records: Mapping[str, object] | None = None
        """The identity every record must match when run.json cannot vouch for them."""
        self._verify_prints: dict[str, str] = {}
        """`fingerprint(_verify_records)`, made once for all the records read."""
        self._replacing = False  # run.json of a session that wrote no result: replaced

    def check_identity(self, ident: dict[str, Any]) -> None:
        """Refuse to resume a run made under a different identity (name what changed).

        run.json is not trusted alone: when it is missing, truncated or foreign (no
        identity of the project's shape in it: `identity_shaped`), every record read
        later is checked against `ident` instead (`load_record`), from the identity
        fingerprint each record carries. One with no result yet is replaced (`holds_results`).
        """
        meta, _ = read_run_meta(self.run_json)
        if meta is None or not identity_shaped(meta.identity):
            self._verify_records = ident
            self._verify_prints = fingerprint(ident)
            return
        changed = changed_keys(meta.identity, ident)
        self._replacing = bool(changed)  # a session that failed at start-up fixed nothing
        if changed and self.holds_results():
            raise ConfigError(
                f"{self.run_json}: this run was made with different {', '.join(changed)}; "
                f"pass a new out=<dir> (or delete {self.path} to start over)"
            )

    def holds_results(self) -> bool:
        """Whether a record or prediction is here: the first one fixes the run's identity."""
        return any(any((self.path / d).glob("*.json")) for d in ("questions", PREDICTIONS))

    def _check_record_identity(self, record: QuestionRecord, path: Path) -> None:
        """Compare a record's own identity with this run's (run.json could not vouch)."""
        ident = self._verify_records
        if ident is None:
            return
        saved = saved_fingerprint(record.provenance)
        if saved is not None:
            changed = fingerprint_changes(saved, self._verify_prints)
        else:
            changed = _unstamped_changes(record, ident)
        if changed:
            raise ConfigError(
                f"{path}: run.json is missing, unreadable or foreign, and this record was "
                f"made with different {', '.join(changed)}; pass a new out=<dir> "
                f"(or delete {self.path} to start over)"
            )

    def write_run_json(
        self, cfg: RunConfig, ident: dict[str, Any], details: RunMeta | None = None
    ) -> None:
        """Write run.json: `details` plus config, identity, provenance; secrets scrubbed."""
        previous = (not self._replacing and read_run_meta(self.run_json)[0]) or RunMeta()
        kept = previous.identity if identity_shaped(previous.identity) else {}  # never foreign
        kept_arms = kept.get("arm_options")  # a dict in an identity of the project's shape
        merged_ident = {
            **kept,  # keys a predict session leaves unbound stay as recorded
            **ident,
            "arm_options": {
                **(kept_arms if isinstance(kept_arms, dict) else {}),
                **ident["arm_options"],
            },
        }
        meta = replace(
            details or RunMeta(),
            run_name=self.path.name,
            created_at=previous.created_at or _now(),
            updated_at=_now(),
            arms=list(dict.fromkeys([*previous.arms, *cfg.arms])),
            identity=merged_ident,
            config_hash=stable_hash(merged_ident),
            config=asdict(cfg),
            provenance=ProvenanceMeta(**provenance()),
        )
        payload = redact_value(meta.to_json(), secret_values(key_env_names(cfg)))
        if self._changed(previous, meta, payload):
            write_json_atomic(contained(self.run_json, self.path), payload)
        self.record_provenance = record_provenance(meta, payload["identity"], ident)

    def _changed(self, previous: RunMeta, meta: RunMeta, payload: object) -> bool:
        """Whether run.json needs rewriting (a finished run may sit in a read-only folder).

        `updated_at` alone is no change; nor is the provenance (code version, machine) of
        a session that wrote no record, since no result in the folder comes from it.
        """
        same_time = replace(previous, updated_at=meta.updated_at)
        if not self.records_written:
            same_time = replace(same_time, provenance=meta.provenance)
        before = redact_value(same_time.to_json(), [])
        return bool(json.loads(json.dumps(payload)) != before)  # as it would read back

    def load_record(self, question: Question) -> QuestionRecord | None:
        """The existing record of a question, or None; an unreadable one is an error.

        Writes are atomic, so an unreadable record was made by something else (a newer
        armbench, a hand edit): it is reported, never silently overwritten.
        """
        path = record_path(self.path, question.file_stem)
        if not path.is_file():
            path = record_path(self.path, question.legacy_file_stem)
        if not _is_file(path):
            return None
        try:
            record = read_record(path)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise DatasetError(
                f"{path}: unreadable record ({_first_line(exc)}); move it away"
            ) from None
        if record.question_id != question.question_id:
            raise DatasetError(
                f"{path}: holds question {record.question_id!r}, expected "
                f"{question.question_id!r}; move it away"
            )
        self._check_record_identity(record, path)
        return record

    def remove_orphans(self) -> int:
        """Delete temp files a killed run left (`.<name>.<random>.tmp`); return how many.

        Only called with the run lock held, so no live writer owns them.
        """
        removed = 0
        for pattern in (".*.tmp", "questions/.*.tmp", "stores/*/*/.*.tmp"):
            for orphan in self.path.glob(pattern):
                if orphan.is_file():
                    contained(orphan, self.path).unlink()
                    removed += 1
        return removed

    def check_writable(self) -> None:
        """Refuse, before any work, a run whose `questions/` cannot take new records."""
        folder = self.path / "questions"
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise BenchError(f"cannot create {folder} ({exc.strerror}): make it writable") from None
        if not os.access(folder, os.W_OK | os.X_OK):
            raise BenchError(
                f"{folder}: not writable, and questions remain to answer: make it writable "
                "(or pass another out=<dir>)"
            )

    def save_record(
        self, question: Question, record: QuestionRecord, actions: Mapping[str, str] | None = None
    ) -> None:
        """Write a question's record atomically under its safe name (inside this folder).

        A record left under the pre-`safe_name` file name is removed once its successor
        is written, so a folder never holds two records of one question. `actions`
        (arm -> `answer`/`judge`): the arms this write answered or judged, appended to
        the run's ledger (`bench.ledger`).
        """
        digest = note_record(self.path, question.file_stem, record)  # first: kill-safe
        write_record(self.path, question.file_stem, record)
        append_writes(self.path, record.question_id, digest, record.arms, actions or {})
        self.records_written += 1
        legacy = record_path(self.path, question.legacy_file_stem)
        if question.legacy_file_stem != question.file_stem and _is_file(legacy):
            contained(legacy, self.path).unlink()


def record_provenance(
    meta: RunMeta, shown_ident: Mapping[str, object], ident: Mapping[str, object]
) -> dict[str, object]:
    """What every record of this session carries: who wrote it, under which identity.

    The full identity lives in run.json; a record keeps the model ids readable (taken
    from `shown_ident`, run.json's redacted copy) and a fingerprint of the rest, which
    is enough to name what changed on a resume without run.json (`fingerprint_changes`).
    """
    return {
        "run": meta.run_name,
        "config_hash": meta.config_hash,
        "git_commit": meta.provenance.git_commit,
        "git_dirty": meta.provenance.git_dirty,
        "dataset_sha256": ident["dataset_sha256"],
        **({"dataset_seed": ident["dataset_seed"]} if "dataset_seed" in ident else {}),
        "prompt_sha256": ident.get("prompt_sha256"),  # None only in predict: no records
        **{k: shown_ident.get(k) for k in _MODEL_KEYS},
        **_judge_provenance(meta),
        "identity_fingerprint": fingerprint(ident),
    }


def _judge_provenance(meta: RunMeta) -> dict[str, object]:
    """`judges`: each judge's model, endpoint, prompt source and hash (absent without judges)."""
    if not meta.judges:
        return {}
    keep = ("model", "endpoint", "prompt_source", "prompt_hash", "official_model", "runs")
    return {"judges": {j.judge_id: {k: getattr(j, k) for k in keep} for j in meta.judges}}


def fingerprint(ident: Mapping[str, object]) -> dict[str, str]:
    """`stable_hash` of every identity value a resume compares, keyed as errors name it.

    Keys: the top-level identity keys, `scoring.f1_threshold`, and `arm_options.<arm>`
    per arm (arm options that are no mapping: `arm_options`). Keys absent from `ident`
    (older run.json files) are absent here. Only identity values are hashed, so a
    fingerprint holds nothing the identity did not.
    """
    prints = {k: stable_hash(ident[k]) for k in _IDENTITY_KEYS if k in ident}
    if "f1_threshold" in ident:
        prints[_THRESHOLD_KEY] = stable_hash(ident["f1_threshold"])
    arms = ident.get("arm_options", {})
    if not isinstance(arms, dict):
        return {**prints, _MALFORMED_ARMS: stable_hash(arms)}
    return {**prints, **{f"{_ARM_PREFIX}{n}": stable_hash(o) for n, o in arms.items()}}


def fingerprint_changes(saved: Mapping[str, object], ours: dict[str, str]) -> list[str]:
    """The keys whose saved hash differs from this run's, in this run's order.

    A key absent on either side passes (an older identity lacks it; an arm one side did
    not run is not a change); arm options saved as no per-arm mapping always differ.
    """
    changed = [k for k, h in ours.items() if k in saved and saved[k] != h]
    return [*changed, _MALFORMED_ARMS] if _MALFORMED_ARMS in saved else changed


def changed_keys(previous: Mapping[str, object], ident: Mapping[str, object]) -> list[str]:
    """The identity keys whose saved value differs from this run's (absent keys pass).

    The same rule as for a record's fingerprint: both identities are fingerprinted.
    """
    return fingerprint_changes(fingerprint(previous), fingerprint(ident))


def saved_fingerprint(provenance: Mapping[str, object]) -> Mapping[str, object] | None:
    """A record's identity fingerprint (None for records written before identities).

    Records written before fingerprints carry the full identity: it is fingerprinted
    here, so old and new records are compared by the one rule.
    """
    prints = provenance.get("identity_fingerprint")
    if isinstance(prints, dict):
        return prints
    full = provenance.get("identity")
    return fingerprint(full) if isinstance(full, dict) else None


def _unstamped_changes(record: QuestionRecord, ident: Mapping[str, object]) -> list[str]:
    """What changed, for a record written before identities were stamped.

    Such a record carries only its dataset and prompt hashes and its arms' outcome rule.
    """
    changed: list[str] = [
        k
        for k in ("dataset_sha256", "prompt_sha256")
        if k in record.provenance and record.provenance[k] != ident[k]
    ]
    outcomes = {r.outcome for r in record.arms.values() if r.outcome}
    if outcomes - {ident["outcome"]}:
        changed.append("outcome")
    return changed


def _is_file(path: Path) -> bool:
    """`path.is_file()`, False for a name the filesystem refuses (a legacy name too long)."""
    try:
        return path.is_file()
    except OSError:
        return False


def _first_line(exc: Exception) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
