"""Typed run configuration. Hydra composes YAML; these dataclasses define it.

`load_run_config` is the one boundary where the composed config becomes typed
objects; nothing below it calls `cfg.get`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class EndpointConfig:
    """One model deployment: the offline default, or an OpenAI-compatible endpoint."""

    kind: str = "offline"
    """`offline` (embedded, deterministic) or `openai` (any OpenAI-compatible server)."""
    model: str = "offline-extractive"
    base_url: str | None = None
    api_key_env: str | None = None
    """Name of the environment variable holding the key; the key itself is never stored."""
    api_version: str | None = None
    """Azure OpenAI api-version, when the endpoint needs one."""
    timeout_s: float = 60.0
    temperature: float = 0.0
    max_tokens: int = 256
    requests_per_minute: int | None = None
    tokens_per_minute: int | None = None
    max_attempts: int = 6
    max_retry_time_s: float = 300.0
    concurrency: int = 4
    price_prompt_per_1k: float | None = None
    price_completion_per_1k: float | None = None


@dataclass
class EmbedderConfig:
    """The embedding model shared by every arm that embeds."""

    kind: str = "wordllama"
    """`wordllama` (offline, shipped in the wheel) or `openai`."""
    model: str = "wordllama/l2_supercat_256"
    dim: int = 256
    base_url: str | None = None
    api_key_env: str | None = None
    api_version: str | None = None
    timeout_s: float = 60.0
    requests_per_minute: int | None = None
    tokens_per_minute: int | None = None
    max_attempts: int = 6
    max_retry_time_s: float = 300.0
    batch_size: int = 128


@dataclass
class CacheConfig:
    """Content-keyed SQLite response cache for chat and embedding calls."""

    mode: str = "readwrite"
    """`off`, `read`, `write` or `readwrite`."""
    path: str | None = None
    """Defaults to `<out>/cache/responses.sqlite`."""


@dataclass
class ProviderConfig:
    """Where answers, extractions and embeddings come from."""

    name: str = "offline"
    answerer: EndpointConfig = field(default_factory=EndpointConfig)
    extractor: EndpointConfig = field(default_factory=lambda: EndpointConfig(model="offline-rules"))
    embedder: EmbedderConfig = field(default_factory=EmbedderConfig)
    cache: CacheConfig = field(default_factory=CacheConfig)


@dataclass
class JudgeConfig:
    """An LLM judge; `endpoint` may be a different deployment from the answerer."""

    judge_id: str = "llm"
    kind: str = "locomo"
    """`locomo` or `longmemeval` (per-type rubric)."""
    prompt: str = "conf/prompts/judge_locomo_v1.txt"
    endpoint: EndpointConfig = field(default_factory=EndpointConfig)


@dataclass
class ScoringConfig:
    """How the binary outcome is decided when no judge runs."""

    f1_threshold: float = 0.5
    primary_judge: str | None = None
    """Judge id whose verdict becomes `correct`; None means the offline F1 rule."""
    rejudge: bool = False
    """Force new verdicts even when a record already has them."""


@dataclass
class DatasetConfig:
    """Which dataset to load and from where."""

    name: str = "locomo"
    loader: str = "locomo"
    """`locomo` or `longmemeval`."""
    path: str | None = None
    """Explicit file; else `$BENCH_DATA_DIR/<filename>`, the cache, or a download."""
    filename: str = "locomo10.json"
    url: str | None = None
    sha256: str | None = None
    """Checksum enforced for the canonical file (downloaded or found by `filename`)."""
    hf_repo: str | None = None
    hf_split: str | None = None
    errata: str | None = None
    """LoCoMo answer-key audit: null (off), `auto` (found or downloaded) or a file path."""


@dataclass
class LimitConfig:
    """Caps for quick runs; None means everything."""

    conversations: int | None = None
    questions: int | None = None
    """Per conversation."""


@dataclass
class AnswerConfig:
    """Answer-format rules and budget, identical for every arm."""

    prompt: str = "conf/prompts/answer_v1.txt"
    max_context_tokens: int = 120_000


@dataclass
class RunConfig:
    """The whole resolved run configuration (arm options are typed per arm kind)."""

    dataset: DatasetConfig
    provider: ProviderConfig
    arms: list[str]
    arm_options: dict[str, Any]
    out: str
    judges: list[JudgeConfig] = field(default_factory=list)
    scoring: ScoringConfig = field(default_factory=ScoringConfig)
    answer: AnswerConfig = field(default_factory=AnswerConfig)
    limit: LimitConfig = field(default_factory=LimitConfig)
    save_context: bool = False
    report: bool = False
    progress: bool = True
    dry_run: bool = False
    """Print what the run would send (requests, tokens, cost, time, cache) and stop."""
