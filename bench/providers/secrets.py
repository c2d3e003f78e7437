"""API keys: read from the environment by name, and scrubbed from every message we emit.

A key is only ever held in memory. Each key (and each memory service token,
`read_service_token`) read here is remembered so that
`redact` can replace it (and any long prefix of it, as servers echo partial keys in
401 bodies) in error messages and log lines. `install_redaction` applies the same
scrubbing to every log record — message, traceback and stack — whatever handler
writes it; `RedactingFilter` does it for one handler.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from bench.errors import ConfigError, ProviderError
from bench.types import ChatResult

PLACEHOLDER_KEY = "not-needed"
"""Sent to local servers that need no key (the SDK refuses an empty one)."""

_MIN_FRAGMENT = 8


class KnownSecrets:
    """The secrets this process has read or been given, for `redact` to mask.

    Owned by `KNOWN`; `forget_all` empties it (a test, or a process done with a run's
    keys). Thread-safe: lanes read keys while others redact.
    """

    def __init__(self) -> None:
        self._secrets: set[str] = set()
        self._lock = threading.Lock()

    def add(self, secret: str) -> None:
        """Remember `secret` (one shorter than 8 characters, or the placeholder, is not kept)."""
        if len(secret) >= _MIN_FRAGMENT and secret != PLACEHOLDER_KEY:
            with self._lock:
                self._secrets.add(secret)

    def longest_first(self) -> list[str]:
        """The secrets, longest first (so a key is masked before a shorter one inside it)."""
        with self._lock:
            return sorted(self._secrets, key=len, reverse=True)

    def forget_all(self) -> None:
        """Forget every secret: `redact` then masks only key-shaped text and bearer tokens."""
        with self._lock:
            self._secrets.clear()


KNOWN = KnownSecrets()
"""The process's known secrets (`KNOWN.forget_all()` resets them)."""


def read_api_key(env_name: str | None, setting: str) -> str:
    """The key in `$env_name`; ProviderError naming the variable and setting if unset.

    `env_name=None` means the endpoint needs no key (a local server).
    """
    if not env_name:
        return PLACEHOLDER_KEY
    value = os.environ.get(env_name, "").strip()
    if not value:
        raise ProviderError(
            f"environment variable {env_name} is not set ({setting}) — export it, "
            f"or set {setting}=null for a local server that needs no key"
        )
    remember(value)
    return value


def read_service_token(env_name: str, setting: str) -> str:
    """A memory service's credential from `$env_name`, remembered so `redact` masks it.

    ConfigError naming the variable and `setting` when it is unset, or shorter than 8
    characters: a token that short could not be masked without masking ordinary words
    (`redact` scrubs secrets of 8 characters or more, and their 8-character ends).
    """
    value = os.environ.get(env_name, "").strip()
    if not value:
        raise ConfigError(f"{setting}={env_name}: environment variable is not set")
    if len(value) < _MIN_FRAGMENT:
        raise ConfigError(
            f"{setting}={env_name}: the token is shorter than {_MIN_FRAGMENT} characters, "
            "too short to be kept out of logs and records; use a longer token"
        )
    remember(value)
    return value


def remember(secret: str) -> None:
    """Add a secret to the set that `redact` scrubs (`KNOWN.add`)."""
    KNOWN.add(secret)


MASK = "***"
"""What a secret is replaced with, everywhere (logs, errors, run.json)."""
_KEY_LIKE = re.compile(r"(?<![A-Za-z0-9])sk-[A-Za-z0-9_\-]{16,}")
_BEARER = re.compile(r"(Bearer\s+)(?!\*\*\*)[A-Za-z0-9\-._~+/]+=*")
"""A bearer token (RFC 6750's token characters), so masking one inside JSON text (a
judge's verdict, tool-call arguments) never swallows a closing quote."""


def redact(text: str) -> str:
    """The project's one redaction policy, for any text we emit or store.

    Masks every known secret (read by `read_api_key` or passed to `remember`), every
    8+ character prefix/suffix of one (servers echo partial keys in 401 bodies), any
    `Bearer <token>` and anything shaped like an OpenAI key (`sk-` + 16 or more).
    """
    text = _KEY_LIKE.sub(MASK, _BEARER.sub(lambda m: m.group(1) + MASK, text))
    for secret in KNOWN.longest_first():
        if secret in text:
            text = text.replace(secret, "***")
        for fragment in (secret[:_MIN_FRAGMENT], secret[-_MIN_FRAGMENT:]):
            if fragment in text:
                text = text.replace(fragment, "***")
    return text


def redact_value(value: Any, secrets: list[str]) -> Any:
    """A deep copy of a JSON-able value with `redact` applied to every string.

    `secrets` are remembered first, so they stay masked in later log lines too.
    """
    for secret in secrets:
        remember(secret)
    if isinstance(value, dict):
        return {k: redact_value(v, []) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_value(v, []) for v in value]
    return redact(value) if isinstance(value, str) else value


def redact_chat(result: ChatResult) -> ChatResult:
    """A model's reply with every secret masked: text, model name and tool-call arguments.

    Applied to every reply a chat provider returns (fresh or cached, 200s included), so
    a server that echoes the `Authorization` header in its answer puts `***` into the
    record, the response cache, the accounting proxy's reply and the logs, never the key.
    """
    calls = tuple(
        {k: redact(v) if isinstance(v, str) else v for k, v in call.items()}
        for call in result.tool_calls
    )
    masked = replace(result, text=redact(result.text), model=redact(result.model), tool_calls=calls)
    return result if masked == result else masked


class RedactingFilter(logging.Filter):
    """A logging filter that masks known secrets in the message, traceback and stack."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Rewrite the record in place; never drops a record."""
        scrub_record(record)
        return True


def scrub_record(record: logging.LogRecord) -> None:
    """Mask known secrets in `record`'s message, formatted exception and stack info.

    The exception is formatted here (into `record.exc_text`, which `logging.Formatter`
    uses instead of formatting `exc_info` again), so the traceback text is scrubbed too.
    """
    try:
        message = record.getMessage()
    except Exception:  # a bad format call: leave it for the handler to report
        message = None
    if message is not None and (cleaned := redact(message)) != message:
        record.msg, record.args = cleaned, None
    if record.exc_info and not record.exc_text:
        record.exc_text = _PLAIN.formatException(record.exc_info)
    if record.exc_text:
        record.exc_text = redact(record.exc_text)
    if record.stack_info:
        record.stack_info = redact(record.stack_info)


_PLAIN = logging.Formatter()


def install_redaction(secret_values: list[str]) -> None:
    """Scrub `secret_values` (and every key `read_api_key` reads) from all log output.

    Every record is scrubbed as it is created (a wrapping log-record factory, so handlers
    and loggers added later are covered), and each handler on the root logger gets a
    `RedactingFilter` as well. Calling it again only adds secrets.
    """
    for value in secret_values:
        remember(value)
    previous = logging.getLogRecordFactory()
    if not getattr(previous, "_armbench_redacting", False):
        logging.setLogRecordFactory(_redacting_factory(previous))
    root = logging.getLogger()
    for handler in root.handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter())


def _redacting_factory(inner: Callable[..., logging.LogRecord]) -> Callable[..., logging.LogRecord]:
    """A log-record factory that scrubs each record `inner` makes."""

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = inner(*args, **kwargs)
        scrub_record(record)
        return record

    factory._armbench_redacting = True  # type: ignore[attr-defined]
    return factory
