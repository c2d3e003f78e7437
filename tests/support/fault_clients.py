"""A provider client for the fault-server tests: fast backoff, cache off unless given."""

from __future__ import annotations

from typing import Any


def quick_chat(
    base_url: str,
    *,
    role: str = "answerer",
    cache: Any = None,
    policy: Any = None,
    limiter: Any = None,
    api_key: str = "sk-test-0000",
    **overrides: Any,
) -> Any:
    """An `OpenAIChat` on `base_url` with fast backoff, for tests (cache off by default)."""
    from bench.config import EndpointConfig
    from bench.providers.accounting import Accountant
    from bench.providers.cache import ResponseCache
    from bench.providers.deployment import Deployment, make_client
    from bench.providers.openai_chat import OpenAIChat
    from bench.providers.ratelimit import SlidingWindowLimiter
    from bench.providers.retry import RetryPolicy

    overrides.setdefault("model", "test-model")
    cfg = EndpointConfig(kind="openai", base_url=base_url, **overrides)
    deployment = Deployment(
        base_url=base_url,
        model=cfg.model,
        client=make_client(base_url, api_key, cfg.api_version, cfg.timeout_s),
        limiter=limiter or SlidingWindowLimiter(None, None),
        concurrency=cfg.concurrency,
        policy=policy or RetryPolicy(max_attempts=cfg.max_attempts, backoff_base_s=0.01),
        timeout_s=cfg.timeout_s,
    )
    return OpenAIChat(
        cfg,
        role=role,
        deployment=deployment,
        cache=cache or ResponseCache(None, "off"),
        accountant=Accountant(),
    )
