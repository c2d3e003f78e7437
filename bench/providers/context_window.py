"""How many tokens one request may use on the answerer's server, asked of the server.

- llama.cpp: `GET <root>/props` (the base URL without `/v1`) reports
  `default_generation_settings.n_ctx`, the context of ONE slot (llama.cpp already divides
  `-c` by `-np`: `-c 65536 -np 2` reports 32768), and `total_slots`.
- vLLM: `GET <base_url>/models` lists each model with `max_model_len`.

Anything else (OpenAI, a server that answers neither) is `None`: the size is unknown and
no check is made unless `provider.context_tokens` is set.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bench.untrusted import parse_json

if TYPE_CHECKING:
    import httpx

log = logging.getLogger("bench.providers")
PROBE_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class ServerContext:
    """The context window of one request slot, and where the number came from."""

    tokens: int
    """Tokens one request (prompt plus completion) may use."""
    slots: int | None
    """Requests the server runs at once (llama.cpp `total_slots`); None when unknown."""
    source: str
    """`provider.context_tokens`, `llama.cpp /props` or `vLLM /v1/models`."""


def probe(base_url: str, model: str, api_key: str | None) -> ServerContext | None:
    """Ask the server (llama.cpp first, then vLLM); None when neither answers usefully."""
    import httpx

    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    base = base_url.rstrip("/")
    root = base[: -len("/v1")] if base.endswith("/v1") else base
    try:
        with httpx.Client(timeout=PROBE_TIMEOUT_S, headers=headers) as client:
            found = _llamacpp(_get(client, f"{root}/props"))
            return found or _vllm(_get(client, f"{base}/models"), model)
    except httpx.HTTPError as exc:
        log.info("context window of %s unknown (%s): no context check", base, type(exc).__name__)
        return None


def _get(client: httpx.Client, url: str) -> object:
    """The JSON body of a 200 reply, else None."""
    reply = client.get(url)
    if reply.status_code != 200:
        return None
    try:
        return parse_json(reply.content, url)
    except ValueError:  # UntrustedJSONError: not usable JSON
        return None


def _positive(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _llamacpp(body: object) -> ServerContext | None:
    if not isinstance(body, dict):
        return None
    settings = body.get("default_generation_settings")
    n_ctx = _positive(settings.get("n_ctx")) if isinstance(settings, dict) else None
    if n_ctx is None:
        return None
    return ServerContext(n_ctx, _positive(body.get("total_slots")), "llama.cpp /props")


def _vllm(body: object, model: str) -> ServerContext | None:
    rows = body.get("data") if isinstance(body, dict) else None
    if not isinstance(rows, list):
        return None
    usable = [r for r in rows if isinstance(r, dict) and _positive(r.get("max_model_len"))]
    chosen = next((r for r in usable if r.get("id") == model), usable[0] if usable else None)
    if chosen is None:
        return None
    return ServerContext(int(chosen["max_model_len"]), None, "vLLM /v1/models")
