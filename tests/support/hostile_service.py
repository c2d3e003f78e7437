"""A misbehaving memory service on loopback (REST, in a thread), for the live arms' fault tests.

It speaks the reference REST contract (docs/live.md) from memory: projects hold the
turns written into them and the name they were created under (`GET /v1/projects`
lists them), and a search returns every item of the project with its `metadata.bench`
marker(s). Like a careless real server it resolves `.` and `..`
steps in a decoded request path, so a namespace id `zz/../other` sent unchecked
reaches project `other`. Every request is logged as `(method, project, route)`, and
its `Authorization` header in `headers`.

Misbehaviour is set on `HostileService.mode` (all off by default):

- `create_ids`: ids returned by the next creates, in order (`zz/../other`, `None`, a
  repeated id ...); the project really created keeps its own id;
- `echo_token`: these routes (`search`, `capture`, `post` for create; `*` for every /v1
  route) answer 422 with the bearer token, without its `Bearer ` prefix, in the body;
- `trickle`: a search answers 200 and then 10 bytes every 0.4 s, for ever (until stop);
- `hang`: a search sends nothing for `hang_s` seconds;
- `retry_after`: the first N searches answer 429 with `Retry-After: <retry_after_s>`;
- `foreign`: a search answers from this other project's items;
- `search_body`: a search answers 200 with exactly these bytes.

Loops are bounded by the server's stop event, so `with HostileService() as s:` ends by
itself however a test fails.
"""

from __future__ import annotations

import json
import posixpath
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit


@dataclass
class Mode:
    """What the service gets wrong (see the module docstring)."""

    create_ids: deque[Any] = field(default_factory=deque)
    echo_token: tuple[str, ...] = ()
    trickle: bool = False
    hang_s: float = 0.0
    retry_after: int = 0
    retry_after_s: str = "1"
    foreign: str | None = None
    search_body: bytes | None = None


class _Server(ThreadingHTTPServer):
    """Quiet when a client hangs up: the tests' clients give up on purpose (deadlines, the
    circuit breaker), which resets the connection the handler is reading from."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionResetError | BrokenPipeError):
            super().handle_error(request, client_address)


class HostileService:
    """The service in a background thread on 127.0.0.1 (random port)."""

    def __init__(self) -> None:
        self.mode = Mode()
        self.projects: dict[str, list[dict[str, Any]]] = {}
        self.names: dict[str, str] = {}
        self.headers: list[str] = []
        self.log: list[tuple[str, str, str]] = []
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._server.service = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> HostileService:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self._server.shutdown()
        self._server.server_close()

    @property
    def url(self) -> str:
        """The base URL, e.g. `http://127.0.0.1:40123`."""
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def add_project(self, project: str, items: list[dict[str, Any]], name: str = "") -> None:
        """A project that exists before the test (another user's data)."""
        self.projects[project] = list(items)
        self.names[project] = name or f"{project}'s notes"

    def touched(self, project: str) -> list[tuple[str, str, str]]:
        """Every logged request that wrote to, deleted or read `project`."""
        return [entry for entry in self.log if entry[1] == project]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass

    @property
    def service(self) -> HostileService:
        return self.server.service  # type: ignore[attr-defined,no-any-return]

    def do_GET(self) -> None:  # noqa: N802 - http.server naming
        self._route("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._route("POST")

    def do_DELETE(self) -> None:  # noqa: N802
        self._route("DELETE")

    def _route(self, method: str) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = json.loads(self.rfile.read(length) or b"null") if length else None
        path = posixpath.normpath(unquote(urlsplit(self.path).path))
        steps = path.strip("/").split("/")
        project = steps[2] if len(steps) >= 3 and steps[:2] == ["v1", "projects"] else ""
        route = steps[3] if len(steps) >= 4 else ""
        svc = self.service
        with svc.lock:
            svc.log.append((method, project, route or method.lower()))
            svc.headers.append(self.headers.get("authorization", ""))
        if path == "/health":
            return self._json(200, {"status": "ok"})
        if (route or method.lower()) in svc.mode.echo_token or "*" in svc.mode.echo_token:
            sent = self.headers.get("authorization", "").removeprefix("Bearer ")
            return self._json(422, {"detail": f"token {sent} may not do that"})
        if path == "/v1/projects" and method == "POST":
            return self._create(body)
        if path == "/v1/projects" and method == "GET":
            listed = [{"id": p, "name": svc.names.get(p, "")} for p in sorted(svc.projects)]
            return self._json(200, {"projects": listed})
        if project not in svc.projects:
            return self._json(404, {"detail": f"project {project!r} not found"})
        if method == "DELETE" and not route:
            del svc.projects[project]
            svc.names.pop(project, None)
            return self._json(200, {"deleted": project})
        if route in ("capture", "memories"):
            return self._write(project, route, body)
        if route == "search":
            return self._search(project)
        return self._json(404, {"detail": "no such route"})

    def _create(self, body: Any) -> None:
        svc = self.service
        with svc.lock:
            real = f"p{len(svc.log)}"
            svc.projects[real] = []
            svc.names[real] = str((body or {}).get("name", ""))
            reply = svc.mode.create_ids.popleft() if svc.mode.create_ids else real
        self._json(201, {"id": reply})

    def _write(self, project: str, route: str, body: Any) -> None:
        if route == "capture":
            for m in body["messages"]:
                self.service.projects[project].append({"text": m["text"], "bench": m["id"]})
        else:
            marker = body.get("metadata", {}).get("bench")
            self.service.projects[project].append({"text": body["text"], "bench": marker})
        self._json(200, {"ok": True})

    def _search(self, project: str) -> None:
        svc, mode = self.service, self.service.mode
        if mode.retry_after > 0:
            mode.retry_after -= 1
            return self._json(429, {"detail": "slow down"}, {"Retry-After": mode.retry_after_s})
        if mode.trickle:
            return self._trickle()
        if mode.search_body is not None:
            return self._send_bytes(200, mode.search_body, {})
        if mode.hang_s:
            svc.stop.wait(mode.hang_s)
        source = svc.projects.get(mode.foreign or project, [])
        results = [
            {"text": item["text"], "score": 1.0, "metadata": {"bench": item["bench"]}}
            for item in source
        ]
        self._json(200, {"results": results, "context": "\n".join(i["text"] for i in source)})

    def _trickle(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "100000")
        self.end_headers()
        deadline = time.monotonic() + 30
        try:
            while not self.service.stop.is_set() and time.monotonic() < deadline:
                self.wfile.write(b" " * 10)
                self.wfile.flush()
                self.service.stop.wait(0.4)
        except OSError:
            pass  # the client gave up: what a bounded client does
        self.close_connection = True

    def _json(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
        self._send_bytes(status, json.dumps(data).encode(), headers or {})

    def _send_bytes(self, status: int, payload: bytes, headers: dict[str, str]) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(payload)


NONCE = "0123456789abcdef0123456789abcdef"
"""The run nonce of the state.json files `write_state` makes."""


def write_state(
    run_dir: Path,
    arm: str,
    entries: list[tuple[str, str, str]],
    arm_spec: dict[str, Any] | None = None,
    owner: str = "h:1",
) -> None:
    """A state.json: `entries` of (namespace, unit, name) for `arm` (kind `arm`).

    A name `""` records none (a file of an earlier version); `"run"` records the name
    the arm would have created it under (`namespace_name` with NONCE).
    """
    from bench.arm.live_state import namespace_name

    namespaces = [
        {
            "arm": arm,
            "namespace": n,
            "unit": unit,
            "owner": owner,
            "name": namespace_name(arm, unit, NONCE) if name == "run" else name,
        }
        for n, unit, name in entries
    ]
    data = {"nonce": NONCE, "arms": {arm: arm_spec or {"kind": arm}}, "namespaces": namespaces}
    (run_dir / "state.json").write_text(json.dumps(data))
