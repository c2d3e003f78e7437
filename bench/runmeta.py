"""`run.json`, typed: the one module that writes and reads a run's metadata.

`RunMeta.to_json()` is what `bench.run` writes; `read_run_meta(path)` is how every
reader (summariser, report, comparable export, notebooks) gets it back. The reader is
tolerant: a missing, truncated or foreign file, or a field of the wrong type, yields
what could be read plus one note per problem — never an exception — so a summary of
records written by another tool still renders and says what it could not read.
Standard library only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from bench.types import HubSource
from bench.untrusted import UntrustedJSONError, read_json

RUN_SCHEMA_VERSION = 1
"""Version of the `run.json` layout written by this armbench."""


@dataclass(frozen=True)
class DatasetMeta:
    """The dataset file a run read."""

    name: str | None = None
    """Dataset name (`locomo`, `longmemeval`, `smoke`, ...)."""
    path: str | None = None
    """Where the file was read from."""
    sha256: str | None = None
    """SHA-256 of the file's bytes."""
    errata_path: str | None = None
    """The answer-key audit applied (`dataset.errata`), None when off."""
    errata_sha256: str | None = None
    """SHA-256 of the audit file."""
    errata_entries: int | None = None
    """Audit entries matched to loaded questions."""
    errata_score_affected: int | None = None
    """Of those, entries whose gold answer changes."""
    hf_repo: str | None = None
    """The Hub dataset the file came from (`dataset.hf_repo`); absent for a local copy."""
    hf_revision: str | None = None
    """The pinned Hub commit it was read at (`dataset.hf_revision`)."""
    hf_file: str | None = None
    """The file inside the Hub repo."""
    hf_sha256_verified: bool | None = None
    """True when `sha256` was checked against a pinned `dataset.sha256`; False when none
    was pinned and it was only recorded (trust on first use)."""


def hub_meta(source: HubSource | None) -> dict[str, Any]:
    """The `DatasetMeta` fields naming the Hub file read (empty for a local copy)."""
    if source is None:
        return {}
    return {
        "hf_repo": source.repo,
        "hf_revision": source.revision,
        "hf_file": source.file,
        "hf_sha256_verified": source.sha256_verified,
    }


@dataclass(frozen=True)
class ProviderMeta:
    """The models a run used."""

    name: str | None = None
    """Provider config name (`offline`, `openai`, `vllm`, ...)."""
    answerer_model: str | None = None
    """The answering model (or the offline answerer's id)."""
    extractor_model: str | None = None
    """The memory engine's fact extractor model."""
    embedder_model: str | None = None
    """The embedding model."""


@dataclass(frozen=True)
class JudgeMeta:
    """One configured judge."""

    judge_id: str | None = None
    """The id its verdicts are stored under."""
    model: str | None = None
    """The judging model."""
    prompt_hash: str | None = None
    """SHA-256 of the judge prompt file (an official judge: of the upstream file)."""
    kind: str | None = None
    """`locomo`, `longmemeval` (armbench's prompts) or an official judge's kind."""
    endpoint: str | None = None
    """The judge endpoint's base URL, without credentials."""
    prompt_source: str | None = None
    """Where the prompt came from: a prompt file path, or the upstream file's pinned URL."""
    official_model: str | None = None
    """The model upstream's judge asks (official judges only)."""
    model_differs: bool | None = None
    """True when `model` is not `official_model`: the scale is not the published one."""
    runs: int | None = None
    """Independent runs per answer (`<judge_id>#<k>` verdicts; outcome = majority)."""


@dataclass(frozen=True)
class ProvenanceMeta:
    """The software a run was made with."""

    git_commit: str | None = None
    """Commit of the armbench checkout."""
    git_dirty: bool | None = None
    """True when code outside results/ had uncommitted changes."""
    armbench: str | None = None
    """armbench version."""
    python: str | None = None
    """Python version."""
    platform: str | None = None
    """`platform.platform()` of the machine."""
    packages: dict[str, str] = field(default_factory=dict)
    """Versions of the libraries that shape results."""


DETERMINISTIC = "deterministic: repeats skipped"
"""What a `repeats=N` run (and its summary) says when nothing in it would vary."""


@dataclass(frozen=True)
class RepeatsMeta:
    """What `repeats=N` did: how many draws, of what, or why none were made."""

    requested: int = 1
    """The `repeats` setting."""
    answers: bool = False
    """True when answers were re-drawn (a sampling answerer, temperature > 0)."""
    judges: bool = False
    """True when LLM verdicts were re-drawn."""
    skipped: str | None = None
    """Why no repeat was made (`deterministic: ...`); None when repeats ran."""


@dataclass(frozen=True)
class RunMeta:
    """Everything `run.json` holds; `None` / empty where a file did not say."""

    schema_version: int = RUN_SCHEMA_VERSION
    """Layout version of this file."""
    run_name: str | None = None
    """The run directory's name."""
    created_at: str | None = None
    """When the run was first started (ISO 8601, UTC)."""
    updated_at: str | None = None
    """When this file was last rewritten."""
    arms: list[str] = field(default_factory=list)
    """Every arm the run has answered with, in run order."""
    identity: Mapping[str, object] = field(default_factory=dict)
    """What must not change between a run and its resumption (see bench.run.directory)."""
    config_hash: str | None = None
    """`stable_hash` of the identity."""
    config: Mapping[str, object] = field(default_factory=dict)
    """The resolved run config (secrets scrubbed)."""
    provenance: ProvenanceMeta = field(default_factory=ProvenanceMeta)
    """Code version and environment."""
    dataset: DatasetMeta = field(default_factory=DatasetMeta)
    """The dataset file."""
    dataset_stats: Mapping[str, object] = field(default_factory=dict)
    """Counts of conversations, sessions, turns and questions."""
    provider: ProviderMeta = field(default_factory=ProviderMeta)
    """Models used."""
    offline: bool | None = None
    """True when answers came from the offline extractive answerer."""
    prompt: dict[str, str] = field(default_factory=dict)
    """The answer prompt file's `path` and `sha256`."""
    tokenizer: str | None = None
    """Tokenizer that counted context tokens."""
    judges: list[JudgeMeta] = field(default_factory=list)
    """Configured judges."""
    outcome: str | None = None
    """The outcome rule's name (`bench.scoring.rules.Outcome.name`)."""
    warnings: list[str] = field(default_factory=list)
    """Warnings the run raised for the reader (e.g. judge = answerer model)."""
    accounting: Mapping[str, object] = field(default_factory=dict)
    """Cumulative requests, tokens, latency and cost per role, over every session."""
    extraction_health: Mapping[str, object] = field(default_factory=dict)
    """arm -> conversation -> {exchanges, failed, facts} (bench.scoring.health)."""
    retrieval_health: Mapping[str, object] = field(default_factory=dict)
    """arm -> unit -> {queries, failed, timed_out, empty, items, requested_k, units, stored,
    probe} (bench.scoring.retrieval_health)."""
    repeats: RepeatsMeta = field(default_factory=RepeatsMeta)
    """The `repeats=N` plan (written only when N > 1)."""
    conversation_tokens: Mapping[str, object] = field(default_factory=dict)
    """Unit (conversation, LongMemEval haystack) -> tokens of its whole transcript
    (`Conversation.transcript`, counted with `tokenizer`): coverage's denominator."""
    sample: Mapping[str, object] = field(default_factory=dict)
    """The seeded stratified sample drawn (`limit.per_category` / `limit.fraction`):
    seed, size, per-category kept/of, ids_sha256 (`bench.types.SampleInfo.to_json`);
    written only for a sampled run."""

    def arm_option(self, arm: str, key: str) -> Any:
        """`config.arm_options.<arm>.<key>`, or None when the file does not say."""
        options = self.config.get("arm_options")
        arm_options = options.get(arm) if isinstance(options, dict) else None
        return arm_options.get(key) if isinstance(arm_options, dict) else None

    def config_value(self, section: str, key: str) -> Any:
        """`config.<section>.<key>`, or None when the file does not say."""
        part = self.config.get(section)
        return part.get(key) if isinstance(part, dict) else None

    def to_json(self) -> dict[str, Any]:
        """The JSON object written to `run.json` (`schema_version` first).

        Errata fields and extraction health are written only when set, so runs without
        them are unchanged.
        """
        out: dict[str, Any] = _plain(self)
        optional = ("errata_", "hf_")
        for key in [k for k, v in out["dataset"].items() if k.startswith(optional) and v is None]:
            del out["dataset"][key]
        if not out["extraction_health"]:  # only runs with extracting arms report it
            out.pop("extraction_health")
        if not out["retrieval_health"]:  # written from the first ingestion on
            out.pop("retrieval_health")
        if self.repeats.requested <= 1:  # single runs are unchanged
            out.pop("repeats")
        if not out["conversation_tokens"]:
            out.pop("conversation_tokens")
        if not out["sample"]:  # runs of the whole dataset are unchanged
            out.pop("sample")
        return out


def read_run_meta(path: Path) -> tuple[RunMeta | None, list[str]]:
    """The typed contents of a `run.json` and one note per thing that could not be read.

    Returns (None, [why]) when the file is absent, unreadable or not a JSON object.
    """
    if not path.is_file() and not path.is_symlink():
        return None, [f"{path.name} absent: run metadata unknown"]
    try:  # a regular file only: never a symlink, FIFO or device (bench.records)
        data = read_json(path)
    except UntrustedJSONError as exc:  # bounded size, depth and numbers (bench.untrusted)
        return None, [f"{path}: unreadable ({exc.what}); run metadata unknown"]
    if not isinstance(data, dict):
        return None, [f"{path}: not a JSON object; run metadata unknown"]
    notes: list[str] = []
    return _build(RunMeta, data, str(path), notes), notes


_NESTED: dict[str, type] = {
    "provenance": ProvenanceMeta,
    "dataset": DatasetMeta,
    "provider": ProviderMeta,
    "repeats": RepeatsMeta,
}


def _build(cls: type, data: dict[str, Any], where: str, notes: list[str]) -> Any:
    """An instance of a meta dataclass from `data`, skipping (and noting) ill-typed values."""
    values: dict[str, Any] = {}
    for f in fields(cls):
        if f.name not in data or data[f.name] is None:
            continue
        value, expected = data[f.name], _expected(cls, f.name)
        if f.name in _NESTED and cls is RunMeta:
            if isinstance(value, dict):
                value = _build(_NESTED[f.name], value, f"{where}: {f.name}", notes)
            else:
                notes.append(f"{where}: {f.name} is not an object; ignored")
                continue
        elif f.name == "judges" and cls is RunMeta:
            value = [_build(JudgeMeta, j, f"{where}: judges", notes) for j in _list(value)]
            value = [j for j in value if j is not None]
        elif f.name in ("arms", "warnings"):
            value = [str(v) for v in _list(value)]
        elif not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
            notes.append(f"{where}: {f.name} has the wrong type; ignored")
            continue
        values[f.name] = value
    return cls(**values)


def _expected(cls: type, name: str) -> type | tuple[type, ...]:
    annotation = str(next(f.type for f in fields(cls) if f.name == name))
    if annotation.startswith(("dict", "Mapping")):
        return dict
    if annotation.startswith("bool"):
        return bool
    if annotation.startswith("int"):
        return int
    return str


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _plain(value: Any) -> Any:
    if hasattr(value, "__dataclass_fields__"):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value
