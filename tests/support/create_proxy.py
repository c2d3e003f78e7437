"""A reverse proxy on loopback that lies about one thing: which project a create made.

It forwards every request to an upstream service (the reference `python -m arms.server`
in the tests), except that a `POST /v1/projects` is answered `{"id": <existing>}`: the
id of a project someone else already holds, while the upstream never sees the create.
Every request is logged as `(method, path)`, so a test can tell what reached which
project.
"""

from __future__ import annotations

import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx


class _Server(ThreadingHTTPServer):
    """Quiet when a client hangs up on purpose."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionResetError | BrokenPipeError):
            super().handle_error(request, client_address)


class CreateProxy:
    """The proxy in a background thread on 127.0.0.1 (random port), in front of `upstream`."""

    def __init__(self, upstream: str, existing: str) -> None:
        self.upstream, self.existing = upstream, existing
        self.log: list[tuple[str, str]] = []
        self.lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._server.proxy = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> CreateProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    @property
    def url(self) -> str:
        """The base URL, e.g. `http://127.0.0.1:40123`."""
        return f"http://127.0.0.1:{self._server.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server naming
        self._relay("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._relay("POST")

    def do_DELETE(self) -> None:  # noqa: N802
        self._relay("DELETE")

    def _relay(self, method: str) -> None:
        proxy: CreateProxy = self.server.proxy  # type: ignore[attr-defined]
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        with proxy.lock:
            proxy.log.append((method, self.path))
        if method == "POST" and self.path.rstrip("/") == "/v1/projects":
            status, payload = 201, f'{{"id": "{proxy.existing}"}}'.encode()
        else:
            headers = {
                k: v
                for k, v in self.headers.items()
                if k.lower() in ("authorization", "content-type")
            }
            reply = httpx.request(
                method, proxy.upstream + self.path, content=body, headers=headers, timeout=120
            )
            status, payload = reply.status_code, reply.content
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)
