"""Fail fast on an unreachable endpoint: one TCP connect per configured URL, before ingestion.

Without it, a wrong host or a server that is not running is discovered only after
each call's full retry budget (~77 s per call). A connect costs milliseconds, sends no
request (so no key and no tokens), and separates the two cases that retrying cannot
fix — the name does not resolve, or nothing listens (connection refused, no route) —
from slow or overloaded servers, which keep the normal retry path. Each URL is probed
once per process (a run).

Where an endpoint needs a key, one authenticated `GET <base_url>/models` follows the
connect (`check_key`): a rejected key (HTTP 401/403) stops the run before its first
record rather than filling the folder with `error` records, and on OpenAI's own API a
model the account does not list is named with its setting. Any other reply (a server
without `/models`, a 5xx) says nothing about the key and is left to the calls.
"""

from __future__ import annotations

import errno
import logging
import socket
import threading
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from bench.errors import ProviderError

if TYPE_CHECKING:
    from bench.config import Endpoint, RunConfig

log = logging.getLogger("bench.providers")
PROBE_TIMEOUT_S = 5.0
"""Longest wait for a connect; a slower server is left to the normal retry path."""
_FATAL = (errno.ECONNREFUSED, errno.ENETUNREACH, errno.EHOSTUNREACH)
OPENAI_URL = "https://api.openai.com/v1"
"""OpenAI's own API, the default base URL: its `/models` lists every model a key may use."""


def configured_endpoints(cfg: RunConfig) -> list[tuple[str, str]]:
    """(setting, base URL) of every configured non-offline endpoint of a RunConfig."""
    return [(setting, url) for setting, url, _ in _endpoints(cfg)]


def _endpoints(cfg: RunConfig) -> list[tuple[str, str, Endpoint]]:
    """(setting, base URL, endpoint config) of every non-offline endpoint of a RunConfig."""
    p = cfg.provider
    named: list[tuple[str, Endpoint]] = [
        ("provider.answerer", p.answerer),
        ("provider.extractor", p.extractor),
        ("provider.embedder", p.embedder),
    ]
    named += [(f"judges.{j.judge_id}.endpoint", j.endpoint) for j in cfg.judges]
    return [
        (setting, e.base_url or OPENAI_URL, e)
        for setting, e in named
        if e.kind not in ("offline", "wordllama")
    ]


class Probes:
    """What this process has probed: each URL and each key check once per run (process).

    Owned by `PROBES`; `reset` forgets them (a test, or a long-lived process starting a
    new run against servers that may have changed).
    """

    def __init__(self) -> None:
        self._done: set[str] = set()
        self._lock = threading.Lock()

    def run(self, cfg: RunConfig) -> None:
        """Connect once to each endpoint's host, then check its key and model (`check_key`).

        Raises ProviderError naming an unreachable URL, a rejected key or an unknown model.
        """
        with self._lock:  # units side by side (lanes) probe once between them
            for setting, url, _ in _endpoints(cfg):
                if url not in self._done:
                    probe(url, setting)
                    self._done.add(url)
            for seen, (setting, url, endpoint) in key_checks(cfg).items():
                if seen not in self._done:
                    check_key(url, setting, endpoint)
                    self._done.add(seen)

    def reset(self) -> None:
        """Forget every probe, so the next `run` probes each endpoint again."""
        with self._lock:
            self._done.clear()


PROBES = Probes()
"""The process's probes (`PROBES.reset()` forgets them)."""


def probe_endpoints(cfg: RunConfig) -> None:
    """`PROBES.run(cfg)`: each endpoint of `cfg` probed once per process (see `Probes`)."""
    PROBES.run(cfg)


def key_checks(cfg: RunConfig) -> dict[str, tuple[str, str, Endpoint]]:
    """The distinct `check_key` requests of a RunConfig: one per URL, key variable, model."""
    checks: dict[str, tuple[str, str, Endpoint]] = {}
    for setting, url, endpoint in _endpoints(cfg):
        key_env = endpoint.api_key_env
        seen = f"{url} {key_env} {endpoint.model}"
        if key_env and seen not in checks:
            checks[seen] = (setting, url, endpoint)
    return checks


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


def check_key(url: str, setting: str, endpoint: Endpoint) -> None:
    """One authenticated `GET <url>/models`: ProviderError on a rejected key or unknown model.

    The model check runs on OpenAI's own API only: other servers (llama.cpp, vLLM behind
    an alias, Azure deployments) answer to names their `/models` does not list.
    """
    import httpx

    from bench.providers.secrets import read_api_key

    key = read_api_key(endpoint.api_key_env, f"{setting}.api_key_env")
    query = {"api-version": endpoint.api_version} if endpoint.api_version else None
    try:
        reply = httpx.get(
            f"{url.rstrip('/')}/models",
            params=query,
            timeout=PROBE_TIMEOUT_S,
            headers={"Authorization": f"Bearer {key}"},
        )
    except httpx.HTTPError as exc:
        log.info("endpoint %s: key not checked (%s)", url, type(exc).__name__)
        return
    if reply.status_code in (401, 403):
        raise ProviderError(
            f"endpoint {url}: the key in ${endpoint.api_key_env} is rejected (HTTP "
            f"{reply.status_code}, {setting}.api_key_env): export a valid key; re-running "
            "with this one cannot succeed"
        )
    if reply.status_code == 200 and url.rstrip("/") == OPENAI_URL:
        listed = _model_ids(reply.content, url)
        if listed is not None and endpoint.model not in listed:
            raise ProviderError(
                f"endpoint {url}: model {endpoint.model!r} not found for this key "
                f"({setting}.model): use a model `GET /models` lists"
            )


def _model_ids(content: bytes, url: str) -> set[str] | None:
    """The ids of a `/models` reply (`{"data": [{"id": ...}]}`), None when unreadable."""
    from bench.untrusted import parse_json

    try:
        body = parse_json(content, f"{url}/models")
    except ValueError:
        return None
    rows = body.get("data") if isinstance(body, dict) else None
    if not isinstance(rows, list):
        return None
    return {str(r["id"]) for r in rows if isinstance(r, dict) and "id" in r}
