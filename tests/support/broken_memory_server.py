"""A deliberately broken REST memory service on loopback, for the retrieval-health tests.

It speaks the reference contract's subset the `http` arm's default YAML uses (health,
create/list/delete a project, capture, memories, search) and fails in one chosen way:

* `healthy`: every write is stored; a search ranks every stored item by words shared
  with the query (ties by write order) and returns the top `k`;
* `cap3`: the same, but never more than 3 items, whatever `k` asks (a silent cap);
* `store_nothing`: every write answers 200 and is dropped; every search finds nothing;
* `slow_search`: healthy, but every search answers after `SLOW_S` seconds (a client
  with a shorter timeout sees every query time out).

Standard library only (http.server in a thread), so a test starts it in milliseconds.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODES = ("healthy", "cap3", "store_nothing", "slow_search")
SLOW_S = 1.0
"""How long a `slow_search` search takes."""


class _Store:
    """Projects -> items (`text`, `bench` marker), and the failure mode."""

    def __init__(self, mode: str) -> None:
        if mode not in MODES:
            raise ValueError(f"mode {mode!r}: use one of {MODES}")
        self.mode = mode
        self.projects: dict[str, list[dict[str, str]]] = {}
        self.names: dict[str, str] = {}
        self.lock = threading.Lock()

    def write(self, project: str, text: str, marker: str) -> None:
        with self.lock:
            if self.mode != "store_nothing":
                self.projects[project].append({"text": text, "bench": marker})

    def search(self, project: str, query: str, k: int) -> list[dict[str, Any]]:
        words = set(re.findall(r"\w+", query.lower()))
        with self.lock:
            items = list(self.projects[project])
        scored = [
            (len(words & set(re.findall(r"\w+", i["text"].lower()))), -n, i)
            for n, i in enumerate(items)
        ]
        scored.sort(key=lambda s: (s[0], s[1]), reverse=True)
        limit = min(k, 3) if self.mode == "cap3" else k
        return [
            {"text": i["text"], "score": float(s), "metadata": {"bench": i["bench"]}}
            for s, _, i in scored[:limit]
        ]


class _Handler(BaseHTTPRequestHandler):
    """The routes; `store` is set on a subclass per server."""

    store: _Store

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def _reply(self, code: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _body(self) -> Any:
        size = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(size) or b"null")

    def do_GET(self) -> None:
        if self.path == "/health":
            self._reply(200, {"status": "ok", "mode": self.store.mode})
        elif self.path == "/v1/projects":
            with self.store.lock:
                listed = [{"id": p, "name": n} for p, n in self.store.names.items()]
            self._reply(200, {"projects": listed})
        else:
            self._reply(404, {"detail": "not found"})

    def do_DELETE(self) -> None:
        project = self.path.rsplit("/", 1)[-1]
        with self.store.lock:
            found = self.store.projects.pop(project, None)
            self.store.names.pop(project, None)
        self._reply(200 if found is not None else 404, {"deleted": project})

    def do_POST(self) -> None:
        body, parts = self._body(), self.path.strip("/").split("/")
        if parts == ["v1", "projects"]:
            with self.store.lock:
                project = f"p{len(self.store.projects) + 1}-{threading.get_ident()}"
                self.store.projects[project] = []
                self.store.names[project] = str(body.get("name", ""))
            self._reply(201, {"id": project})
            return
        if len(parts) != 4 or parts[2] not in self.store.projects:
            self._reply(404, {"detail": "unknown project"})
            return
        self._act(parts[2], parts[3], body)

    def _act(self, project: str, action: str, body: Any) -> None:
        if action == "capture":
            for m in body["messages"]:
                self.store.write(project, f"{m['speaker']}: {m['text']}", m.get("id") or "")
            self._reply(200, {"turn": 1, "facts": len(body["messages"]), "errors": 0})
        elif action == "memories":
            self.store.write(project, body["text"], body.get("metadata", {}).get("bench", ""))
            self._reply(200, {"id": "m"})
        elif action == "search":
            if self.store.mode == "slow_search":
                time.sleep(SLOW_S)
            found = self.store.search(project, body["query"], int(body["k"]))
            context = "\n".join(i["text"] for i in found)
            self._reply(200, {"results": found, "context": context})
        else:
            self._reply(404, {"detail": "unknown route"})


@contextmanager
def broken_server(mode: str) -> Iterator[str]:
    """Serve `mode` on a free 127.0.0.1 port in a thread; yield its base URL."""
    server = ThreadingHTTPServer(
        ("127.0.0.1", 0), type("Handler", (_Handler,), {"store": _Store(mode)})
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
