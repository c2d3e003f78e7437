"""The run directory: run.json identity checks, resumable question records."""

from __future__ import annotations

from dataclasses import asdict, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.config import RunConfig
from bench.errors import ConfigError, DatasetError
from bench.hashing import stable_hash
from bench.paths import contained
from bench.providers.secrets import redact_value
from bench.records import (
    OK,
    QuestionRecord,
    read_record,
    record_path,
    write_json_atomic,
    write_record,
)
from bench.run.provenance import provenance, secret_values
from bench.runmeta import ProvenanceMeta, RunMeta, read_run_meta
from bench.scoring.rules import Outcome
from bench.types import Question

# Identity keys: a run directory only ever holds answers produced under these values.
_IDENTITY_KEYS = (
    "dataset_sha256", "prompt_sha256", "answerer", "extractor", "embedder", "answer_settings",
    "outcome", "errata_sha256",
)  # fmt: skip


def key_env_names(cfg: RunConfig) -> list[str]:
    """Every environment variable named as holding a key (their values are scrubbed)."""
    endpoints: list[Any] = [cfg.provider.answerer, cfg.provider.extractor, cfg.provider.embedder]
    endpoints += [j.endpoint for j in cfg.judges]
    return [e.api_key_env for e in endpoints if e.api_key_env]


def identity(
    cfg: RunConfig, dataset_sha256: str, prompt_sha256: str, errata_sha256: str | None = None
) -> dict[str, Any]:
    """What must not change between a run and its resumption (errata: the audit file's hash)."""
    p = cfg.provider
    return {
        "dataset_sha256": dataset_sha256,
        "prompt_sha256": prompt_sha256,
        "answerer": f"{p.answerer.kind}:{p.answerer.base_url or ''}:{p.answerer.model}",
        "extractor": f"{p.extractor.kind}:{p.extractor.model}",
        "embedder": f"{p.embedder.kind}:{p.embedder.model}:{p.embedder.dim}",
        "answer_settings": {
            "max_context_tokens": cfg.answer.max_context_tokens,
            "temperature": p.answerer.temperature,
            "max_tokens": p.answerer.max_tokens,
        },
        "outcome": outcome_rule(cfg),
        "arm_options": {name: cfg.arm_options[name] for name in cfg.arms},
        "f1_threshold": cfg.scoring.f1_threshold,
        "errata_sha256": errata_sha256,
    }


def outcome_rule(cfg: RunConfig) -> str:
    """The name of the rule that sets `correct` (`bench.scoring.rules.Outcome`)."""
    return Outcome.for_scoring(cfg.scoring.primary_judge, cfg.scoring.f1_threshold).name


def add_accounting(earlier: Any, now: Any) -> Any:
    """Sum two accounting trees field by field (numbers add; other values take `now`)."""
    if isinstance(earlier, dict) and isinstance(now, dict):
        keys = list(dict.fromkeys([*earlier, *now]))
        return {k: add_accounting(earlier.get(k), now.get(k)) for k in keys}
    both_numbers = all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in (earlier, now)
    )
    if both_numbers:
        return earlier + now
    return now if now is not None else earlier


class RunDirectory:
    """One run's folder: `run.json`, `questions/`, `stores/`, `cache/`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.run_json = path / "run.json"
        self.record_provenance: dict[str, Any] = {}
        """Stamped on every record this process writes (set by `write_run_json`)."""

    def check_identity(self, ident: dict[str, Any]) -> None:
        """Refuse to resume a run made under a different identity (name what changed)."""
        meta, _ = read_run_meta(self.run_json)
        if meta is None:
            return
        previous = meta.identity
        changed = [k for k in _IDENTITY_KEYS if k in previous and previous[k] != ident[k]]
        if previous.get("f1_threshold", ident["f1_threshold"]) != ident["f1_threshold"]:
            changed.append("scoring.f1_threshold")
        old_arms = previous.get("arm_options", {})
        changed += [
            f"arm_options.{n}" for n, o in ident["arm_options"].items() if old_arms.get(n, o) != o
        ]
        if changed:
            raise ConfigError(
                f"{self.run_json}: this run was made with different {', '.join(changed)}; "
                f"pass a new out=<dir> (or delete {self.path} to start over)"
            )

    def write_run_json(
        self, cfg: RunConfig, ident: dict[str, Any], details: RunMeta | None = None
    ) -> None:
        """Write run.json: `details` plus config, identity, provenance; secrets scrubbed."""
        previous = read_run_meta(self.run_json)[0] or RunMeta()
        merged_ident = {
            **ident,
            "arm_options": {**previous.identity.get("arm_options", {}), **ident["arm_options"]},
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
        before = redact_value(replace(previous, updated_at=meta.updated_at).to_json(), [])
        if payload != before:  # unchanged: not rewritten (a finished run may be read-only)
            write_json_atomic(contained(self.run_json, self.path), payload)
        self.record_provenance = {
            "run": self.path.name,
            "config_hash": meta.config_hash,
            "git_commit": meta.provenance.git_commit,
            "git_dirty": meta.provenance.git_dirty,
            "dataset_sha256": ident["dataset_sha256"],
            "prompt_sha256": ident["prompt_sha256"],
        }

    def previous_accounting(self) -> dict[str, Any]:
        """The cumulative costs recorded by earlier sessions of this run ({} if none)."""
        meta, _ = read_run_meta(self.run_json)
        return meta.accounting if meta else {}

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
        return record

    def save_record(self, question: Question, record: QuestionRecord) -> None:
        """Write a question's record atomically under its safe name (inside this folder).

        A record left under the pre-`safe_name` file name is removed once its successor
        is written, so a folder never holds two records of one question.
        """
        write_record(self.path, question.file_stem, record)
        legacy = record_path(self.path, question.legacy_file_stem)
        if question.legacy_file_stem != question.file_stem and _is_file(legacy):
            contained(legacy, self.path).unlink()


def arms_to_run(
    record: QuestionRecord | None, arms: list[str], judges: tuple[Any, ...], rejudge: bool
) -> tuple[list[str], list[str]]:
    """(arms needing an answer, arms needing only judging) for a question's record."""
    from bench.scoring.judges import needs_judgement

    if record is None:
        return list(arms), []
    answer, judge = [], []
    for name in arms:
        result = record.arms.get(name)
        if result is None or result.status != OK:
            answer.append(name)
        elif any(needs_judgement(result, j, rejudge=rejudge) for j in judges):
            judge.append(name)
    return answer, judge


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
