"""API keys: read from the environment by name, and scrubbed from every message we emit.

A key is only ever held in memory. Each key read here is remembered so that
`redact` can replace it (and any long prefix of it, as servers echo partial keys in
401 bodies) in error messages and log lines; `RedactingFilter` applies the same
scrubbing to any logging handler.
"""

from __future__ import annotations

import logging
import os
import threading

from bench.errors import ProviderError

PLACEHOLDER_KEY = "not-needed"
"""Sent to local servers that need no key (the SDK refuses an empty one)."""

_MIN_FRAGMENT = 8
_lock = threading.Lock()
_known: set[str] = set()


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


def remember(secret: str) -> None:
    """Add a secret to the set that `redact` scrubs."""
    if len(secret) >= _MIN_FRAGMENT and secret != PLACEHOLDER_KEY:
        with _lock:
            _known.add(secret)


def redact(text: str) -> str:
    """`text` with every known secret, and every 8+ character prefix/suffix of one, masked."""
    with _lock:
        secrets = sorted(_known, key=len, reverse=True)
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, "***")
        for fragment in (secret[:_MIN_FRAGMENT], secret[-_MIN_FRAGMENT:]):
            if fragment in text:
                text = text.replace(fragment, "***")
    return text


class RedactingFilter(logging.Filter):
    """A logging filter that masks known secrets in the formatted message."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Rewrite the record's message in place; never drops a record."""
        message = record.getMessage()
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True
