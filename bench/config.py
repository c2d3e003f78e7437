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
    """Model (or deployment) name sent to the endpoint."""
    base_url: str | None = None
    """Endpoint base URL for `openai`; None for `offline`."""
    api_key_env: str | None = None
    """Name of the environment variable holding the key; the key itself is never stored."""
    api_version: str | None = None
    """Azure OpenAI api-version, when the endpoint needs one."""
    timeout_s: float = 60.0
    """Per-request timeout in seconds."""
    temperature: float = 0.0
    """Sampling temperature (0.0 for reproducible answers)."""
    max_tokens: int = 256
    """Cap on completion tokens per call (a call may ask for fewer, never more)."""
    reasoning: str = "false"
    """`false` (send `temperature`, `max_tokens`, `stop`), `true` (a reasoning model such
    as OpenAI's gpt-5 or o-series: send `max_completion_tokens` and `reasoning_effort`,
    no sampling parameters) or `auto` (start as `false`; the first HTTP 400 rejecting one
    of those parameters switches the endpoint to `true` for the rest of the run)."""
    reasoning_effort: str | None = None
    """`reasoning_effort` sent in reasoning mode (`minimal`, `low`, `medium`, `high`, ...
    as the SDK lists them); None sends none (the model's default)."""
    max_completion_tokens: int | None = None
    """Cap on completion tokens in reasoning mode, hidden reasoning included; a call's own
    lower cap does not narrow it (the reasoning would use it up). None means `max_tokens`."""
    json_schema: bool = False
    """The server constrains a reply to a JSON Schema (`response_format: json_schema`);
    llama.cpp, vLLM and OpenAI do. The extractor and the judges use it when set."""
    requests_per_minute: int | None = None
    """Client-side request rate limit; None means unlimited."""
    tokens_per_minute: int | None = None
    """Client-side token rate limit; None means unlimited."""
    max_attempts: int = 6
    """Most tries per call, the first included, before it fails."""
    max_retry_time_s: float = 300.0
    """Most seconds spent retrying one call before it fails."""
    concurrency: int = 4
    """Most calls in flight at once to this endpoint."""
    price_prompt_per_1k: float | None = None
    """Price per 1,000 prompt tokens, for cost accounting; None means unpriced."""
    price_completion_per_1k: float | None = None
    """Price per 1,000 completion tokens, for cost accounting; None means unpriced."""


@dataclass
class ExtractorConfig(EndpointConfig):
    """The fact extractor's endpoint, plus how it asks for facts."""

    extract_mode: str = "tools"
    """`tools` (one `update_memory` tool call; with `json_schema`, a server seen ignoring
    tools switches the run to the schema) or `json_schema` (schema only)."""


@dataclass
class EmbedderConfig:
    """The embedding model shared by every arm that embeds."""

    kind: str = "wordllama"
    """`wordllama` (offline, shipped in the wheel) or `openai`."""
    model: str = "wordllama/l2_supercat_256"
    """Embedding model name."""
    dim: int = 256
    """Embedding vector dimension."""
    base_url: str | None = None
    """Endpoint base URL for `openai`; None for `wordllama`."""
    api_key_env: str | None = None
    """Name of the environment variable holding the key; the key itself is never stored."""
    api_version: str | None = None
    """Azure OpenAI api-version, when the endpoint needs one."""
    timeout_s: float = 60.0
    """Per-request timeout in seconds."""
    requests_per_minute: int | None = None
    """Client-side request rate limit; None means unlimited."""
    tokens_per_minute: int | None = None
    """Client-side token rate limit; None means unlimited."""
    max_attempts: int = 6
    """Most tries per call, the first included, before it fails."""
    max_retry_time_s: float = 300.0
    """Most seconds spent retrying one call before it fails."""
    batch_size: int = 128
    """Texts embedded per request."""
    price_prompt_per_1k: float | None = None
    """Price per 1,000 input tokens, for cost accounting and `budget.max_usd`; None: unpriced."""


Endpoint = EndpointConfig | EmbedderConfig
"""Any configured model endpoint: a chat deployment (answerer, extractor, judge) or the embedder."""


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
    """Provider profile name (recorded in run.json)."""
    answerer: EndpointConfig = field(default_factory=EndpointConfig)
    """Endpoint that writes the answers."""
    extractor: ExtractorConfig = field(
        default_factory=lambda: ExtractorConfig(model="offline-rules")
    )
    """Endpoint arms use to extract facts (neuromorphic)."""
    embedder: EmbedderConfig = field(default_factory=EmbedderConfig)
    """The shared embedding model."""
    cache: CacheConfig = field(default_factory=CacheConfig)
    """The response cache settings."""
    context_tokens: int | None = None
    """Context window per request slot of the answerer's server, in tokens; None asks the
    server (llama.cpp `/props`, vLLM `/v1/models`) and skips the check when it cannot tell."""
    context_shared: bool = False
    """The server's slots share one KV cache (llama.cpp `--kv-unified`): a request then
    gets the reported context divided by min(answerer concurrency, slots)."""


@dataclass
class JudgeConfig:
    """An LLM judge; `endpoint` may be a different deployment from the answerer."""

    judge_id: str = "llm"
    """Id the judge's verdicts are keyed by in records."""
    kind: str = "locomo"
    """`locomo` or `longmemeval` (armbench's prompts, per-type rubric), or an official
    judge read from its upstream file: `longmemeval_official`, `mem0_locomo`."""
    prompt: str = "conf/prompts/judge_locomo_v2.txt"
    """Path of the versioned judge prompt file (unused by the official judges)."""
    endpoint: EndpointConfig = field(default_factory=EndpointConfig)
    """Deployment the judge calls."""
    runs: int = 1
    """Independent judge runs per answer (odd); run k's verdict is stored as
    `<judge_id>#<k>` and the outcome is their majority (`bench.scoring.judge_runs`)."""


@dataclass
class ScoringConfig:
    """How the binary outcome is decided when no judge runs."""

    f1_threshold: float = 0.5
    """Official F1 at or above which an answer counts as correct (no primary judge)."""
    primary_judge: str | None = None
    """Judge id whose verdict becomes `correct`; None means the offline F1 rule."""
    rejudge: bool = False
    """Force new verdicts even when a record already has them (unparseable ones too)."""
    judge_attempts: int = 2
    """Asks per answer before a verdict that stays unparseable is recorded as
    `unparseable` (kept, not asked again on rerun unless `rejudge`)."""


@dataclass
class DatasetConfig:
    """Which dataset to load and from where."""

    name: str = "locomo"
    """Dataset name, written to records and run.json."""
    loader: str = "locomo"
    """`locomo`, `longmemeval`, `beam` or `locomo_plus`."""
    path: str | None = None
    """Explicit file; else `$BENCH_DATA_DIR/<filename>`, the cache, or a download."""
    filename: str = "locomo10.json"
    """File name looked for in `$BENCH_DATA_DIR` and the cache."""
    url: str | None = None
    """Download URL of the canonical file; None means no download."""
    sha256: str | None = None
    """Checksum enforced for the canonical file (downloaded or found by `filename`)."""
    hf_repo: str | None = None
    """Hugging Face dataset repo to download from; None means none."""
    hf_split: str | None = None
    """The file of `hf_repo` to fetch; None: the variant's (LongMemEval) or the tier's (BEAM)."""
    hf_revision: str | None = None
    """The Hub commit (40 hex digits) `hf_repo` is fetched at (a branch moves); run.json
    records it with the file's SHA-256, checked when `sha256` is pinned (bench/loaders/hub.py)."""
    variant: str | None = None
    """LongMemEval: `s`, `m` or `oracle` (the file `longmemeval_<variant>`); None for others."""
    errata: str | None = None
    """LoCoMo answer-key audit: null (off), `auto` (found or downloaded) or a file path."""
    tier: str | None = None
    """BEAM: conversation length tier, `128k`, `500k`, `1m` or `10m`; None for others."""
    seed: int | None = None
    """LoCoMo-Plus: seed of the choice of LoCoMo conversation each item is stitched into
    (recorded in run.json and every record); None for datasets without randomness."""


@dataclass
class LimitConfig:
    """Caps for quick runs; None means everything."""

    conversations: int | None = None
    """Most conversations to run (the first ones); None means all."""
    questions: int | None = None
    """Most questions to run, in dataset order, on every dataset (LongMemEval: 4 is four
    questions, so four haystacks); a conversation left with none is not run. None: all."""
    per_conversation: int | None = None
    """Most questions per conversation (the first ones), applied before `questions`."""
    per_category: int | None = None
    """Seeded stratified sample: at most N questions of each category (LoCoMo category,
    LongMemEval question type, BEAM ability), drawn by `bench.loaders.sample`; None: off."""
    fraction: float | None = None
    """Seeded stratified sample: ceil(F x n) of each category's n questions (0 < F <= 1);
    None: off. Exclusive with `per_category` and `questions`."""
    seed: int = 0
    """Seed of the stratified sample (`per_category` / `fraction`); recorded in run.json."""

    def kept(self, sizes: list[int]) -> list[int]:
        """How many questions each unit (of `sizes` questions, in order) keeps; 0: not run.

        The first `conversations` units, at most `per_conversation` questions each, then
        the first `questions` of those in order: `questions` counts questions on every
        dataset, so one-question units (LongMemEval) stop at N as LoCoMo's do. The one
        rule `bench.run` (`limit_dataset`) and `bench.suite` (`limit_suites`) limit by.
        """
        left, kept = self.questions, []
        for unit, size in enumerate(sizes):
            n = 0 if self.conversations is not None and unit >= self.conversations else size
            n = n if self.per_conversation is None else min(n, self.per_conversation)
            n = n if left is None else min(n, left)
            left = None if left is None else left - n
            kept.append(n)
        return kept


@dataclass
class BudgetConfig:
    """A spending cap checked against the dry-run estimate before anything is sent."""

    max_usd: float | None = None
    """Most dollars the run's uncached requests may cost (`dry_run` figures); None: no cap.
    A run over it, or with a role whose price is unknown, is refused before any call."""


@dataclass
class AnswerConfig:
    """Answer-format rules and budget, identical for every arm."""

    prompt: str = "conf/prompts/answer_v2.txt"
    """Path of the versioned answer prompt file."""
    max_context_tokens: int = 120_000
    """Token budget of the context block; longer contexts are truncated."""
    max_tokens: int = 64
    """Completion cap of an answer (the format asks for a short phrase); the lower of this
    and `provider.answerer.max_tokens` is sent. A reply that hits it is flagged `truncated`."""
    stop: list[str] = field(default_factory=lambda: ["\n\n"])
    """Stop sequences sent with every answer (at most 4)."""
    truncate_to_fit: bool = False
    """When the context budget cannot fit the server's context per slot: false refuses the
    run up front (exit 2, with the numbers); true lowers the budget to fit and records
    `context_truncated` on every answer it cut."""


@dataclass
class RayConfig:
    """Where `executor=ray` sends its tasks (see docs/cluster.md)."""

    address: str = "local"
    """`local` (start a private cluster of `num_cpus` on 127.0.0.1), `auto` (the cluster
    this machine joined with `ray start`) or `host:port` of a running head."""
    num_cpus: int | None = None
    """CPUs of a `local` cluster; None means this machine's count."""
    max_retries: int = 2
    """How often Ray re-runs a unit whose worker died or raised, before it becomes `error`."""


@dataclass
class S3Config:
    """Remote run directories (`out=s3://bucket/prefix`), staged locally (docs/cluster.md)."""

    cache_dir: str | None = None
    """Local staging root; None means `$ARMBENCH_S3_CACHE`, else `~/.cache/armbench/s3`."""
    endpoint_url: str | None = None
    """S3-compatible endpoint URL; None means boto3's own lookup (`AWS_ENDPOINT_URL`, AWS)."""
    uri: str | None = None
    """The `s3://` URI this run mirrors to; set by bench.run from `out=s3://...`."""


@dataclass
class OtelConfig:
    """OpenTelemetry export of a run (`otel=true`; docs/report.md#opentelemetry); off by default."""

    enabled: bool = False
    """Emit a span per run and per question and a `gen_ai.evaluation.result` event per
    verdict (bench/run/otel.py); needs the `otel` extra. `otel=true` sets it."""
    endpoint: str | None = None
    """OTLP/HTTP endpoint (`http://127.0.0.1:4318`); None: `$OTEL_EXPORTER_OTLP_ENDPOINT`.
    Headers (e.g. a key) only from `$OTEL_EXPORTER_OTLP_HEADERS`, never the config."""
    content: bool = False
    """Also put question, gold, answer and judge explanations in attributes (off: ids,
    labels and numbers only)."""
    service_name: str = "armbench"
    """The `service.name` resource attribute."""


@dataclass
class PluginConfig:
    """Time limits of plug-in arms (bench/arm/guard.py); built-in arms are not affected."""

    import_timeout_s: float = 120.0
    """Most seconds a plug-in's import, and separately its construction, may take."""
    ingest_timeout_s: float = 3600.0
    """Most seconds one `ingest` (one conversation) may take; past it the call is an
    `error` result."""
    retrieve_timeout_s: float = 120.0
    """Most seconds one `retrieve` (also `fingerprint`, `close`) may take."""
    breaker_timeouts: int = 3
    """Consecutive calls past their deadline that open the arm's circuit breaker."""


@dataclass
class RunConfig:
    """The whole resolved run configuration (arm options are typed per arm kind)."""

    dataset: DatasetConfig
    """The dataset to load."""
    provider: ProviderConfig
    """The model endpoints and cache."""
    arms: list[str]
    """Names of the arms to run, in order."""
    arm_options: dict[str, Any]
    """Raw per-arm option tables, keyed by arm name (typed by each arm kind)."""
    out: str
    """Output folder the run directory is created in."""
    judges: list[JudgeConfig] = field(default_factory=list)
    """LLM judges to run on every answer; empty means none."""
    scoring: ScoringConfig = field(default_factory=ScoringConfig)
    """How `correct` is decided."""
    answer: AnswerConfig = field(default_factory=AnswerConfig)
    """Answer prompt and context budget."""
    limit: LimitConfig = field(default_factory=LimitConfig)
    """Caps for quick runs."""
    save_context: bool = False
    """Save each rendered context in the records (`ArmResult.context`)."""
    report: bool = False
    """Write the summary report when the run ends."""
    progress: bool = True
    """Show a progress bar."""
    phase: str = "all"
    """`all`, `predict` (ingest + retrieve, stored) or `evaluate` (answer + judge from
    the stored retrievals; no arm is called). See bench/run/phases.py."""
    heartbeat_s: float = 60.0
    """Seconds between heartbeat log lines (questions done, errors, ETA); 0 turns them off."""
    workers: int = 1
    """Units (conversations; LongMemEval questions) run in parallel processes; 0 = auto:
    every core for the offline provider, 1 for live ones (their rate limits are per process)."""
    executor: str = "local"
    """`local` (this machine, `workers` processes) or `ray` (one Ray task per unit)."""
    shard: str | None = None
    """`i/n`: run only units whose position p has p % n == i (0 <= i < n)."""
    ray: RayConfig = field(default_factory=RayConfig)
    """Where `executor=ray` sends its tasks; ignored by the local executor."""
    s3: S3Config = field(default_factory=S3Config)
    """Staging and endpoint for `out=s3://...`; unused for a local `out`."""
    otel: OtelConfig = field(default_factory=OtelConfig)
    """OpenTelemetry spans and evaluation events (off unless `otel=true`)."""
    dry_run: bool = False
    """Print what the run would send (requests, tokens, cost, time, cache) and stop."""
    budget: BudgetConfig = field(default_factory=BudgetConfig)
    """The spending cap (`budget.max_usd`), checked by a dry-run estimate first."""
    plugins: PluginConfig = field(default_factory=PluginConfig)
    """Time limits of plug-in arms (import, construction, ingest, retrieve, breaker)."""
    repeats: int = 1
    """Draws of the stochastic parts (sampled answers, LLM judges) per question and arm;
    repeat 0 keeps the single-run cache keys (docs/audit.md, bench/answer/repeats.py)."""
    context_budgets: list[int] = field(default_factory=list)
    """Context budgets B in tokens (e.g. `[256,512,1024,2048,4096]`): every arm is also
    answered with its context cut to each B (bench/context_budget.py, methodology §3.5);
    empty (default): no budget answers, records unchanged (bench/run/budgets.py)."""
    held_out: str | None = None
    """The split this run's questions are held out from, when its settings were tuned on
    other questions (e.g. `conv-26..conv-41`); recorded in run.json. A job of a `-m` sweep
    that names none is marked `tuned-in-sample` (bench/summarise/claims.py)."""
