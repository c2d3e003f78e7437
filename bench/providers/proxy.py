"""The accounting proxy: an OpenAI-compatible endpoint for systems that call LLMs themselves.

A memory library or service under test often makes its own chat and embedding calls
(extraction, summaries, query rewriting), which would bypass armbench's client, cache,
rate limits, retries, secret handling and token accounting. Pointed at this proxy, they
go through the run's providers instead (`ProviderSet.proxy_chat` / `proxy_embedder`),
each call attributed to the arm and phase in its URL path:

    POST /arm/<arm>/<ingest|retrieve>/v1/chat/completions   (messages, tools, max_tokens, stop)
    POST /arm/<arm>/<ingest|retrieve>/v1/embeddings          (input: str or list of str)
    GET  /arm/<arm>/<phase>/v1/models                        (the one served model)
    GET  /accounting                                         (the run's accounting so far)

It binds 127.0.0.1 only and is served by the standard library (`http.server`, one
thread per request): fastapi is not a runtime dependency of armbench. A request the
proxy cannot serve gets an OpenAI-style error body (`{"error": {"message", "type"}}`):
404 for an unknown path, 400 for a malformed body, 502 when the provider failed. A
client has `read_deadline_s` (30 s) in all to send its request, and one that goes away
or is cut off costs one debug log line, never a traceback.
What it relays and stores has its secrets masked: replies by the chat provider
(`bench.providers.secrets.redact_chat`, before its cache), error bodies here.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import socket
import sys
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from bench.errors import ProviderError
from bench.files import MAX_RECORD_BYTES
from bench.providers.base import CallOptions, ChatProvider, Embedder
from bench.providers.secrets import redact
from bench.types import ChatResult
from bench.untrusted import parse_json

log = logging.getLogger("bench.providers")

PHASES = ("ingest", "retrieve")
"""The phases a call is attributed to (the URL's second segment after `/arm/`)."""
ROUTE = re.compile(
    r"^/arm/([A-Za-z0-9_.-]{1,64})/(ingest|retrieve)/v1/(chat/completions|embeddings|models)$"
)
"""`/arm/<arm>/<phase>/v1/<endpoint>`; arm names as run-local arm names allow."""
MAX_EMBED_INPUTS = 2048
"""Texts one embeddings request may carry (OpenAI's own limit): the reply's vectors, built
whole as JSON, are bounded by inputs, not only by the 64 MiB body (millions of short
texts would be gigabytes of floats)."""


class ProxyBackend:
    """What the proxy forwards to: a chat provider and an embedder per (arm, phase)."""

    def __init__(
        self,
        chat: Callable[[str, str], ChatProvider],
        embedder: Callable[[str, str], Embedder],
        accounting: Callable[[], dict[str, object]],
    ) -> None:
        self.chat = chat
        """(arm, phase) -> the chat provider its calls go through."""
        self.embedder = embedder
        """(arm, phase) -> the embedder its calls go through."""
        self.accounting = accounting
        """The run's accounting snapshot (served at `/accounting`)."""


class BadRequest(ValueError):
    """A request body the proxy cannot turn into a provider call."""


def chat_reply(result: ChatResult) -> dict[str, object]:
    """The OpenAI `chat.completion` body for one result (deterministic: no clock, no ids)."""
    message: dict[str, object] = {"role": "assistant", "content": result.text}
    if result.tool_calls:
        message["tool_calls"] = [
            {"id": f"call_{i}", "type": "function", "function": dict(call)}
            for i, call in enumerate(result.tool_calls)
        ]
    usage = result.usage
    return {
        "id": "chatcmpl-armbench-proxy",
        "object": "chat.completion",
        "created": 0,
        "model": result.model,
        "choices": [{"index": 0, "message": message, "finish_reason": result.finish_reason}],
        "usage": {
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.prompt_tokens + usage.completion_tokens,
        },
    }


def call_chat(chat: ChatProvider, body: object) -> dict[str, object]:
    """Forward one chat request body through `chat`; the reply body."""
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        raise BadRequest("a chat request needs a JSON object with a `messages` list")
    stop = body.get("stop") or ()
    options = CallOptions(
        max_tokens=body.get("max_tokens") or body.get("max_completion_tokens"),
        stop=(stop,) if isinstance(stop, str) else tuple(stop),
    )
    tools = body.get("tools") or None
    return chat_reply(chat.complete(body["messages"], tools=tools, options=options))


def call_embed(embedder: Embedder, body: object) -> dict[str, object]:
    """Forward one embeddings request body through `embedder`; the reply body."""
    given = body.get("input") if isinstance(body, dict) else None
    texts = [given] if isinstance(given, str) else given
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        raise BadRequest("an embeddings request needs `input`: a string or a list of strings")
    if len(texts) > MAX_EMBED_INPUTS:
        raise BadRequest(
            f"an embeddings request of {len(texts)} inputs: send at most {MAX_EMBED_INPUTS}"
        )
    vectors = embedder.embed(texts).tolist() if texts else []
    data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
    return {
        "object": "list",
        "data": data,
        "model": embedder.model,
        "usage": {"prompt_tokens": 0, "total_tokens": 0},
    }


READ_DEADLINE_S = 30.0
"""Most seconds a client may take to send one whole request (line, headers, body)."""


class _Handler(BaseHTTPRequestHandler):
    """Routes; `backend` and `read_deadline_s` are set on a subclass per server.

    A client must have sent its whole request within `read_deadline_s` (a total
    deadline, not per read: a client trickling one byte a second is cut off too); the
    provider call that follows has its own limits. A client that goes away is dropped
    quietly, without a traceback.
    """

    backend: ProxyBackend
    read_deadline_s: float = READ_DEADLINE_S

    def setup(self) -> None:
        """Start the request's read deadline (it shuts the connection down when it passes)."""
        super().setup()
        self._deadline = threading.Timer(self.read_deadline_s, self._cut_off)
        self._deadline.daemon = True
        self._deadline.start()

    def _cut_off(self) -> None:
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def finish(self) -> None:
        """Stop the deadline; a client already gone is no error."""
        self._deadline.cancel()
        with contextlib.suppress(OSError):
            super().finish()

    def log_message(self, *args: Any) -> None:
        """Quiet: every call is in the accounting, not in a log line per request."""

    def _reply(self, code: int, body: Any) -> None:
        data = json.dumps(body).encode()
        try:
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:  # the client went away (or was cut off): nothing to tell it
            self.close_connection = True

    def _error(self, code: int, message: str, kind: str) -> None:
        self._reply(code, {"error": {"message": redact(message), "type": kind}})

    def do_GET(self) -> None:
        """`/accounting`, or the model list of one (arm, phase)."""
        self._deadline.cancel()  # the whole request is in
        if self.path == "/accounting":
            self._reply(200, self.backend.accounting())
            return
        match = ROUTE.match(self.path)
        if not match or match.group(3) != "models":
            self._error(404, f"no route GET {self.path}", "not_found")
            return
        model = self.backend.chat(match.group(1), match.group(2)).model
        self._reply(200, {"object": "list", "data": [{"id": model, "object": "model"}]})

    def do_POST(self) -> None:
        """A chat completion or an embedding, attributed to the path's arm and phase."""
        match = ROUTE.match(self.path)
        if not match or match.group(3) == "models":
            self._error(
                404, f"no route POST {self.path}: use /arm/<arm>/<phase>/v1/...", "not_found"
            )
            return
        arm, phase, endpoint = match.groups()
        try:
            size = int(self.headers.get("Content-Length") or 0)
            if not 0 <= size <= MAX_RECORD_BYTES:
                raise BadRequest(f"Content-Length {size}: at most {MAX_RECORD_BYTES} bytes")
            raw = self.rfile.read(size)
            self._deadline.cancel()  # the whole request is in
            if len(raw) < size:
                raise BadRequest(f"the body ended after {len(raw)} of {size} bytes")
            body = parse_json(raw or b"null", f"POST {self.path}")
            if endpoint == "embeddings":
                reply = call_embed(self.backend.embedder(arm, phase), body)
            else:
                reply = call_chat(self.backend.chat(arm, phase), body)
        except (BadRequest, ValueError) as exc:
            self._error(400, str(exc).splitlines()[0][:300], "invalid_request_error")
        except ProviderError as exc:
            self._error(502, str(exc).splitlines()[0][:300], "provider_error")
        else:
            self._reply(200, reply)


class _QuietServer(ThreadingHTTPServer):
    """A threading server that logs a failed request in one debug line, no traceback."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        """One debug line (a client that went away is routine, not worth a traceback)."""
        kind, value = sys.exc_info()[:2]
        log.debug(
            "proxy: request from %s ended: %s: %s",
            client_address,
            getattr(kind, "__name__", kind),
            value,
        )


class AccountingProxy:
    """The proxy server on 127.0.0.1 (a free port unless given), served from a thread."""

    def __init__(
        self, backend: ProxyBackend, port: int = 0, read_deadline_s: float = READ_DEADLINE_S
    ) -> None:
        attributes = {
            "backend": backend,
            "read_deadline_s": read_deadline_s,
            "timeout": read_deadline_s,
        }
        handler = type("ProxyHandler", (_Handler,), attributes)
        self._server = _QuietServer(("127.0.0.1", port), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="armbench-proxy", daemon=True
        )
        self._thread.start()

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:<port>`."""
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def url(self, arm: str, phase: str) -> str:
        """The OpenAI base URL (ending in `/v1`) that attributes calls to `arm` and `phase`."""
        if phase not in PHASES or not ROUTE.match(f"/arm/{arm}/{phase}/v1/models"):
            raise ValueError(
                f"proxy: arm {arm!r} phase {phase!r}: use a plain arm name and "
                f"one of {', '.join(PHASES)}"
            )
        return f"{self.base_url}/arm/{arm}/{phase}/v1"

    def close(self) -> None:
        """Stop serving and release the port."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
