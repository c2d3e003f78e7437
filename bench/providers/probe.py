"""Fail fast on an unreachable endpoint: one TCP connect per configured URL, before ingestion.

Without it, a wrong host or a server that is not running is discovered only after
each call's full retry budget (~77 s per call). A connect costs milliseconds, sends no
request (so no key and no tokens), and separates the two cases that retrying cannot
fix — the name does not resolve, or nothing listens (connection refused, no route) —
from slow or overloaded servers, which keep the normal retry path. Each URL is probed
once per process (a run).
"""

from __future__ import annotations

import errno
import logging
import socket
from typing import Any
from urllib.parse import urlsplit

from bench.errors import ProviderError

log = logging.getLogger("bench.providers")
PROBE_TIMEOUT_S = 5.0
"""Longest wait for a connect; a slower server is left to the normal retry path."""
_FATAL = (errno.ECONNREFUSED, errno.ENETUNREACH, errno.EHOSTUNREACH)
_probed: set[str] = set()


def configured_endpoints(cfg: Any) -> list[tuple[str, str]]:
    """(setting, base URL) of every configured non-offline endpoint of a RunConfig."""
    p = cfg.provider
    named = [("provider.answerer", p.answerer), ("provider.extractor", p.extractor),
             ("provider.embedder", p.embedder)]  # fmt: skip
    named += [(f"judges.{j.judge_id}.endpoint", j.endpoint) for j in cfg.judges]
    return [
        (setting, e.base_url or "https://api.openai.com/v1")
        for setting, e in named
        if e.kind not in ("offline", "wordllama")
    ]


def probe_endpoints(cfg: Any) -> None:
    """Connect once to each endpoint's host; raise ProviderError naming an unreachable URL."""
    for setting, url in configured_endpoints(cfg):
        if url not in _probed:
            probe(url, setting)
            _probed.add(url)


def probe(url: str, setting: str) -> None:
    """One TCP connect to `url`'s host and port (DNS failure or refusal: ProviderError)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    fix = f"start the server or fix {setting}.base_url"
    try:
        socket.create_connection((host, port), timeout=PROBE_TIMEOUT_S).close()
    except socket.gaierror as exc:
        raise ProviderError(
            f"endpoint {url}: host {host!r} not found ({exc.strerror}): {fix}"
        ) from None
    except OSError as exc:
        if exc.errno in _FATAL:
            raise ProviderError(f"endpoint {url}: {exc.strerror or exc}: {fix}") from None
        log.warning("endpoint %s did not answer a connect (%s); calls will retry", url, exc)
