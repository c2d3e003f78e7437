"""Keys: a missing one is named at build time; a present one never leaks anywhere."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from bench.config import CacheConfig, EmbedderConfig, EndpointConfig, ProviderConfig
from bench.errors import ProviderError
from bench.providers.factory import build_providers
from bench.providers.secrets import (
    KnownSecrets,
    RedactingFilter,
    read_api_key,
    redact,
    remember,
)
from tests.support.fault_replies import echo_chat_fn
from tests.support.fault_server import Fault, FaultServer

FAKE_KEY = "sk-fake-LEAKCHECK-7f3a9c2e41b8d605"
ENV = "ARMBENCH_TEST_FAKE_KEY"


def _cfg(base_url: str, env: str | None = ENV) -> ProviderConfig:
    endpoint = EndpointConfig(kind="openai", model="m", base_url=base_url, api_key_env=env)
    return ProviderConfig(
        answerer=endpoint,
        embedder=EmbedderConfig(kind="openai", model="e", base_url=base_url, api_key_env=env),
        cache=CacheConfig(mode="readwrite"),
    )


def test_missing_key_names_the_variable_and_setting_at_build_time(monkeypatch, tmp_path: Path):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    cfg = _cfg("http://127.0.0.1:9/v1", env="OPENAI_API_KEY")
    with pytest.raises(ProviderError) as err:
        build_providers(cfg, tmp_path)
    assert str(err.value).startswith(
        "environment variable OPENAI_API_KEY is not set (provider.answerer.api_key_env) — export it"
    )


def test_no_key_needed_when_no_variable_is_configured():
    assert read_api_key(None, "provider.answerer.api_key_env") == "not-needed"


def test_key_never_reaches_logs_errors_accounting_or_cache(monkeypatch, caplog, tmp_path: Path):
    monkeypatch.setenv(ENV, FAKE_KEY)
    caplog.set_level(logging.DEBUG)  # including the SDK's and httpx's debug logs
    with FaultServer(chat_fn=echo_chat_fn) as server:
        providers = build_providers(_cfg(server.base_url), tmp_path)
        server.fail_next(Fault.http(503, echo_auth=True))
        providers.answerer.complete([{"role": "user", "content": "hi"}])
        server.fail_next(Fault.http(401, echo_auth=True))
        with pytest.raises(ProviderError) as err:
            providers.answerer.complete([{"role": "user", "content": "other"}])
        providers.embedder.embed(["a text"])
        accounting = json.dumps(providers.accounting())
        providers.close()
        seen = server.requests
    assert all(r.auth_present for r in seen)  # the key was sent ...
    assert "HTTP 401" in str(err.value) and len(seen) == 4  # ... 401 not retried ...
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "retrying" in logged
    for text in (logged, str(err.value), accounting):
        assert FAKE_KEY not in text and FAKE_KEY[-8:] not in text  # ... and never written
    cache_bytes = (tmp_path / "cache" / "responses.sqlite").read_bytes()
    assert FAKE_KEY.encode() not in cache_bytes


def test_redact_masks_whole_keys_and_echoed_fragments():
    remember(FAKE_KEY)
    assert redact(f"Bearer {FAKE_KEY}") == "Bearer ***"
    assert FAKE_KEY[-8:] not in redact(f"Incorrect API key provided: sk-fake-****{FAKE_KEY[-8:]}")
    assert redact("nothing secret here") == "nothing secret here"


def test_redacting_filter_rewrites_log_records():
    remember(FAKE_KEY)
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "key=%s", (FAKE_KEY,), None)
    assert RedactingFilter().filter(record)
    assert record.getMessage() == "key=***"


@pytest.fixture
def restore_logging():
    """Undo install_redaction's global changes after the test."""
    factory = logging.getLogRecordFactory()
    root = logging.getLogger()
    filters = {h: list(h.filters) for h in root.handlers}
    yield
    logging.setLogRecordFactory(factory)
    for handler, kept in filters.items():
        handler.filters[:] = kept


def test_installed_redaction_scrubs_tracebacks_in_handlers_added_later(
    tmp_path: Path, restore_logging
):
    from bench.providers.secrets import install_redaction

    secret = "sk-install-TRACEBACK-93c1e0d4a7b2"
    install_redaction([secret])
    install_redaction([])  # idempotent: one wrapper, one filter per handler
    logger = logging.getLogger("armbench.test.redaction")
    handler = logging.FileHandler(tmp_path / "run.log", encoding="utf-8")
    logger.addHandler(handler)  # attached after install_redaction ran
    logger.propagate = False
    try:
        try:
            raise RuntimeError(f"401 Incorrect API key provided: {secret}")
        except RuntimeError:
            logger.exception("call failed with key %s", secret, stack_info=True)
        logger.error("bad format %s %s", "only one")  # still reported, never raised here
    finally:
        logger.removeHandler(handler)
        handler.close()
        logger.propagate = True
    text = (tmp_path / "run.log").read_text(encoding="utf-8")
    assert "call failed with key ***" in text
    assert "RuntimeError: 401 Incorrect API key provided: ***" in text  # the traceback
    assert "Traceback (most recent call last)" in text and "Stack (most recent call last)" in text
    assert secret not in text and secret[:8] not in text and secret[-8:] not in text


def test_redacting_filter_scrubs_exception_text():
    remember(FAKE_KEY)
    try:
        raise ValueError(FAKE_KEY)
    except ValueError:
        import sys

        exc_info = sys.exc_info()
    record = logging.LogRecord("x", logging.ERROR, __file__, 1, "boom", None, exc_info)
    assert RedactingFilter().filter(record)
    formatted = logging.Formatter().format(record)
    assert "ValueError: ***" in formatted and FAKE_KEY not in formatted


def test_forgetting_the_known_secrets_stops_masking_them() -> None:
    """`KnownSecrets` owns what `redact` masks; `forget_all` is its one reset."""
    known = KnownSecrets()
    secret = "plain-word-secret-0123"
    known.add(secret)
    known.add("short")  # too short to mask without masking ordinary words
    assert known.longest_first() == [secret]
    known.forget_all()
    assert known.longest_first() == []
    remember(secret)
    assert redact(f"x {secret} y") == "x *** y"
