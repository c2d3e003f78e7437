"""Build the run's providers from `ProviderConfig`: one explicit, lazy name table.

| kind        | answerer / extractor / judge      | embedder               |
|-------------|-----------------------------------|------------------------|
| `offline`   | `OfflineAnswerer` / none / —      | —                      |
| `wordllama` | —                                 | `WordLlamaEmbedder`    |
| `openai`    | `OpenAIChat`                      | `OpenAIEmbedder`       |

Roles on the same (base URL, model) share one quota: one limiter and one concurrency
bound, sized by the first of them built (the answerer, then the extractor, embedder and
judges in order). Each distinct client configuration — base URL, model, API key
variable, API version, timeout, retry settings — gets its own client, so a judge on the
answerer's model with another key or api_version really uses them. Missing keys are
reported here, before any work starts.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from bench.config import CacheConfig, EmbedderConfig, EndpointConfig, JudgeConfig, ProviderConfig
from bench.errors import ConfigError
from bench.names import unknown
from bench.providers.accounted import AccountedChat, AccountedEmbedder
from bench.providers.accounting import Accountant
from bench.providers.base import CallOptions, ChatProvider, Embedder, Message, Tool
from bench.providers.cache import ResponseCache
from bench.providers.deployment import DEFAULT_BASE_URL, Deployment, make_client
from bench.providers.ratelimit import Limiter, LimiterFactory, SlidingWindowLimiter
from bench.providers.retry import RetryPolicy
from bench.providers.roles import PROXY
from bench.providers.secrets import read_api_key
from bench.types import ChatResult

if TYPE_CHECKING:
    from bench.providers.proxy import AccountingProxy

CHAT_KINDS = ("offline", "openai")
EMBED_KINDS = ("wordllama", "openai")
RATE_WINDOW_S = 60.0
"""The limiter's window: `requests_per_minute` is per this many seconds (tests shorten it)."""


def _check_kind(kind: str, allowed: tuple[str, ...], setting: str) -> None:
    if kind not in allowed:
        raise unknown("kind", kind, list(allowed), setting)


@dataclass(frozen=True)
class _Quota:
    """The limiter and concurrency slots shared by every client on one (base URL, model)."""

    limiter: Limiter
    slots: threading.BoundedSemaphore
    concurrency: int


class _Deployments:
    """Deployments keyed by their whole client configuration, sharing a quota per model."""

    def __init__(self, window_s: float, limiters: LimiterFactory | None = None) -> None:
        self._window_s = window_s
        self._limiters = limiters or _local_limiter
        self._quotas: dict[tuple[str, str], _Quota] = {}
        self._by_key: dict[tuple[object, ...], Deployment] = {}

    def get(self, cfg: EndpointConfig | EmbedderConfig, setting: str) -> Deployment:
        """The deployment for `cfg`; reads its key now (ProviderError if unset)."""
        api_key = read_api_key(cfg.api_key_env, f"{setting}.api_key_env")
        base_url = (cfg.base_url or DEFAULT_BASE_URL).rstrip("/")
        key: tuple[object, ...] = (
            base_url,
            cfg.model,
            cfg.api_key_env,
            cfg.api_version,
            cfg.timeout_s,
            cfg.max_attempts,
            cfg.max_retry_time_s,
        )
        if key not in self._by_key:
            quota = self._quota(cfg, base_url)
            self._by_key[key] = Deployment(
                base_url=base_url,
                model=cfg.model,
                client=make_client(base_url, api_key, cfg.api_version, cfg.timeout_s),
                limiter=quota.limiter,
                concurrency=quota.concurrency,
                policy=RetryPolicy(
                    max_attempts=cfg.max_attempts, max_retry_time_s=cfg.max_retry_time_s
                ),
                slots=quota.slots,
                timeout_s=cfg.timeout_s,
            )
        return self._by_key[key]

    def _quota(self, cfg: EndpointConfig | EmbedderConfig, base_url: str) -> _Quota:
        """The (base URL, model) quota; the first config seen on it sets its bounds."""
        key = (base_url, cfg.model)
        if key not in self._quotas:
            concurrency = max(1, getattr(cfg, "concurrency", 4))
            self._quotas[key] = _Quota(
                limiter=self._limiters(
                    base_url,
                    cfg.model,
                    cfg.requests_per_minute,
                    cfg.tokens_per_minute,
                    self._window_s,
                ),
                slots=threading.BoundedSemaphore(concurrency),
                concurrency=concurrency,
            )
        return self._quotas[key]

    def close(self) -> None:
        """Close every client."""
        for deployment in self._by_key.values():
            deployment.close()
        self._by_key.clear()
        self._quotas.clear()


class ProviderSet:
    """The answerer, extractor, embedder and judges of one run, with shared accounting."""

    answerer: ChatProvider
    extractor: ChatProvider | None
    embedder: Embedder

    def __init__(
        self,
        cfg: ProviderConfig,
        run_dir: Path,
        *,
        window_s: float = RATE_WINDOW_S,
        limiters: LimiterFactory | None = None,
        answerer: bool = True,
    ):
        self._cfg = cfg
        self._accountant = Accountant()
        self._proxy: AccountingProxy | None = None  # started on the first proxy_url
        self._proxied_chats: dict[str, ChatProvider] = {}  # proxy role -> chat provider
        self._proxied_embedders: dict[str, Embedder] = {}  # proxy role -> embedder
        self._deployments = _Deployments(window_s, limiters)
        self._cache = _open_cache(cfg.cache, run_dir)
        self._judges: dict[str, ChatProvider] = {}
        try:
            self.answerer = (
                self._chat(cfg.answerer, "answerer", "provider.answerer")
                if answerer
                else NoAnswerer()
            )
            self.extractor = (
                None
                if cfg.extractor.kind == "offline"
                else self._chat(cfg.extractor, "extractor", "provider.extractor")
            )
            self.embedder = self._embedder(cfg.embedder)
        except BaseException:
            self.close()
            raise

    def judge(self, cfg: JudgeConfig) -> ChatProvider:
        """The chat provider for an LLM judge (memoised by judge id)."""
        if cfg.judge_id not in self._judges:
            if cfg.endpoint.kind != "openai":
                raise ConfigError(
                    f"judge {cfg.judge_id!r}: endpoint.kind={cfg.endpoint.kind!r}; an LLM judge "
                    "needs kind=openai (use judge=none for the offline F1 rule)"
                )
            role = f"judge:{cfg.judge_id}"
            self._judges[cfg.judge_id] = self._chat(
                cfg.endpoint, role, f"judge[{cfg.judge_id}].endpoint"
            )
        return self._judges[cfg.judge_id]

    def accounting(self) -> dict[str, object]:
        """Totals per role, per phase and overall (see `Accountant.snapshot`)."""
        return self._accountant.snapshot()

    def proxy_url(self, arm: str, phase: str) -> str:
        """The accounting proxy's OpenAI base URL for `arm`'s calls in `phase`.

        `phase` is `ingest` or `retrieve`; the proxy (bench/providers/proxy.py) starts on
        first use and stops in `close`.
        """
        if self._proxy is None:
            from bench.providers.proxy import AccountingProxy, ProxyBackend

            backend = ProxyBackend(self.proxy_chat, self.proxy_embedder, self.accounting)
            self._proxy = AccountingProxy(backend)
        return str(self._proxy.url(arm, phase))

    def proxy_chat(self, arm: str, phase: str) -> ChatProvider:
        """The chat model proxied calls use, accounted as `proxy:<arm>:<phase>`.

        The extractor's endpoint when it is an LLM, else the answerer's (the offline
        answerer in an offline run).
        """
        role = f"{PROXY}:{arm}:{phase}"
        if role not in self._proxied_chats:
            llm = self._cfg.extractor if self._cfg.extractor.kind != "offline" else None
            endpoint, setting = (
                (llm, "provider.extractor") if llm else (self._cfg.answerer, "provider.answerer")
            )
            self._proxied_chats[role] = self._chat(endpoint, role, setting)
        return self._proxied_chats[role]

    def proxy_embedder(self, arm: str, phase: str) -> Embedder:
        """The run's embedder, its proxied calls accounted as `proxy:<arm>:<phase>`."""
        role = f"{PROXY}:{arm}:{phase}"
        if role not in self._proxied_embedders:
            self._proxied_embedders[role] = self._embedder(self._cfg.embedder, role)
        return self._proxied_embedders[role]

    def close(self) -> None:
        """Stop the proxy (when started), close HTTP clients and the cache."""
        if self._proxy is not None:
            self._proxy.close()
            self._proxy = None
        self._deployments.close()
        self._cache.close()

    def _chat(self, cfg: EndpointConfig, role: str, setting: str) -> ChatProvider:
        _check_kind(cfg.kind, CHAT_KINDS, f"{setting}.kind")
        if cfg.kind == "offline":
            from bench.providers.offline_answer import OfflineAnswerer

            return AccountedChat(OfflineAnswerer(), role=role, accountant=self._accountant)
        from bench.providers.openai_chat import OpenAIChat
        from bench.providers.reasoning import check_effort, reasoning_mode

        reasoning_mode(cfg.reasoning, f"{setting}.reasoning")  # the error names the setting
        check_effort(cfg.reasoning_effort, f"{setting}.reasoning_effort")
        return OpenAIChat(
            cfg,
            role=role,
            deployment=self._deployments.get(cfg, setting),
            cache=self._cache,
            accountant=self._accountant,
        )

    def _embedder(self, cfg: EmbedderConfig, role: str = "embedder") -> Embedder:
        _check_kind(cfg.kind, EMBED_KINDS, "provider.embedder.kind")
        if cfg.kind == "wordllama":
            from bench.providers.embed_memo import MemoEmbedder
            from bench.providers.offline_embed import WordLlamaEmbedder

            shared = getattr(self, "embedder", None)  # the proxy reuses the loaded model
            inner = shared.inner if isinstance(shared, AccountedEmbedder) else None
            inner = inner or MemoEmbedder(WordLlamaEmbedder(dim=cfg.dim))  # each text once
            return AccountedEmbedder(inner, role=role, accountant=self._accountant)
        from bench.providers.openai_embed import OpenAIEmbedder

        return OpenAIEmbedder(
            cfg,
            deployment=self._deployments.get(cfg, "provider.embedder"),
            cache=self._cache,
            accountant=self._accountant,
            role=role,
        )


def _open_cache(cfg: CacheConfig, run_dir: Path) -> ResponseCache:
    path = Path(cfg.path).expanduser() if cfg.path else run_dir / "cache" / "responses.sqlite"
    return ResponseCache(path, cfg.mode)


def build_providers(
    cfg: ProviderConfig,
    run_dir: Path,
    limiters: LimiterFactory | None = None,
    *,
    answerer: bool = True,
) -> ProviderSet:
    """The run's providers; raises ProviderError (missing key) or ConfigError (bad kind).

    `limiters` makes each deployment's limiter (default: one in this process; under
    `executor=ray`, a proxy to the run's one limiter actor per deployment).
    `answerer=False` (a run that answers nothing: a suite without `suite.answer`)
    builds no answerer: the offline one loads nltk and scipy (~1 s of CPU).
    """
    return ProviderSet(cfg, run_dir, window_s=RATE_WINDOW_S, limiters=limiters, answerer=answerer)


def _local_limiter(
    base_url: str, model: str, requests: int | None, tokens: int | None, window_s: float
) -> Limiter:
    """An in-process limiter (every executor but Ray)."""
    return SlidingWindowLimiter(requests, tokens, window_s=window_s)


class NoAnswerer:
    """The answerer of a run built with `answerer=False`: asking it is a bug, said so."""

    model = "none"

    def complete(
        self,
        messages: list[Message],
        *,
        tools: list[Tool] | None = None,
        prompt_version: str = "",
        options: CallOptions | None = None,
    ) -> ChatResult:
        """Never answers: this run was built without an answerer."""
        raise ConfigError("this run was built without an answerer (answerer=False)")
