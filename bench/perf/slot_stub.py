"""A model-server stand-in with a fixed latency and N slots, that reports its busy time.

`python -m bench.perf.slot_stub --latency 0.2 --slots 4` serves OpenAI-compatible
`POST /v1/chat/completions` on 127.0.0.1 (a free port, printed
as the first line on stdout) and `GET /stats`. Like llama.cpp's server it decodes at most
`slots` requests at once: a request waits for a free slot, holds it for `latency`
seconds, then gets its reply. Standard library only, so it also runs beside another
checkout's code (`python path/to/slot_stub.py`).

Replies are deterministic and shaped for the harness, not for quality: an extraction
(tool `update_memory`, or a schema other than `verdict`) stores one fact restating the
request's last line; a judge (schema `verdict`, or a prompt holding `Gold answer`) gets a
JSON verdict; anything else a short fixed answer. `GET /stats` returns every request as
`[kind, arrived, started, ended]` (monotonic seconds; kind `extract`, `judge` or
`answer`), with how many bodies of each kind were distinct.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ANSWER = "I don't know."


class SlotState:
    """The stub's slots, latency and request log (shared by the handler threads)."""

    def __init__(self, latency_s: float, slots: int) -> None:
        self.latency_s = latency_s
        self.slots = slots
        self.free = threading.Semaphore(slots)
        self.lock = threading.Lock()
        self.log: list[tuple[str, float, float, float]] = []
        self.bodies: dict[str, set[str]] = {}

    def serve(self, kind: str, body: dict[str, object]) -> None:
        """Wait for a slot, hold it `latency_s`, log the request."""
        arrived = time.monotonic()
        digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
        with self.free:
            started = time.monotonic()
            if self.latency_s > 0:
                time.sleep(self.latency_s)
            ended = time.monotonic()
        with self.lock:
            self.log.append((kind, arrived, started, ended))
            self.bodies.setdefault(kind, set()).add(digest)

    def stats(self) -> dict[str, object]:
        """The request log, slots, latency and distinct bodies per kind."""
        with self.lock:
            return {
                "slots": self.slots,
                "latency_s": self.latency_s,
                "requests": [list(row) for row in self.log],
                "distinct": {k: len(v) for k, v in sorted(self.bodies.items())},
            }


def request_kind(body: dict[str, Any]) -> str:
    """`extract`, `judge` or `answer` for a chat body."""
    tools = [str((t.get("function") or {}).get("name")) for t in body.get("tools") or []]
    fmt = body.get("response_format")
    schema = (fmt.get("json_schema") or {}).get("name") if isinstance(fmt, dict) else None
    if "update_memory" in tools or (schema is not None and schema != "verdict"):
        return "extract"
    texts = [str(m.get("content")) for m in body.get("messages") or [] if isinstance(m, dict)]
    if schema == "verdict" or any("Gold answer" in t for t in texts):
        return "judge"
    return "answer"


def chat_reply(kind: str, body: dict[str, Any]) -> dict[str, object]:
    """The assistant message for a chat body of `kind`."""
    if kind == "judge":
        return {"role": "assistant", "content": json.dumps({"reasoning": "stub", "correct": False})}
    if kind == "answer":
        return {"role": "assistant", "content": ANSWER}
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    last = str(messages[-1].get("content") if messages else "").strip().splitlines()
    fact: dict[str, object] = {
        "entity_name": "stub / note",
        "fact_content": (last[-1] if last else "nothing")[:200],
        "memory_type": "ActiveContext",
        "overrides_entity": None,
        "related_entities": [],
        "valid_at": None,
    }
    arguments = json.dumps({"items": [fact]})
    if body.get("tools"):
        function = {"name": "update_memory", "arguments": arguments}
        call = {"id": "call_0", "type": "function", "function": function}
        return {"role": "assistant", "content": None, "tool_calls": [call]}
    return {"role": "assistant", "content": arguments}


class _Handler(BaseHTTPRequestHandler):
    state: SlotState
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        """Send each reply at once (no Nagle delay waiting for the client's ACK)."""
        super().setup()
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        """Silence the access log."""

    def do_GET(self) -> None:  # noqa: N802 - http.server naming
        """`/stats`: the request log."""
        if self.path.rstrip("/") != "/stats":
            self._send(404, {"error": {"message": "not found"}})
            return
        self._send(200, self.state.stats())

    def do_POST(self) -> None:  # noqa: N802 - http.server naming
        """A chat completion or an embedding, after a slot's worth of latency."""
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            body = {}
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(404, {"error": {"message": "only /v1/chat/completions is served"}})
            return
        kind = request_kind(body)
        self.state.serve(kind, body)
        message = chat_reply(kind, body)
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        usage = {"prompt_tokens": length // 4 + 1, "completion_tokens": 8, "total_tokens": 0}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        choice = {"index": 0, "message": message, "finish_reason": finish}
        reply = {"id": "stub", "object": "chat.completion", "created": 0, "choices": [choice]}
        self._send(200, {**reply, "model": body.get("model", "stub"), "usage": usage})

    def _send(self, status: int, payload: dict[str, object]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _embeddings(body: dict[str, Any]) -> dict[str, object]:
    texts = body.get("input") or []
    texts = [texts] if isinstance(texts, str) else list(texts)
    data = [{"object": "embedding", "index": i, "embedding": [1.0, 0.0]} for i in range(len(texts))]
    return {"object": "list", "data": data, "model": "stub", "usage": {"prompt_tokens": 1}}


def serve(latency_s: float, slots: int) -> ThreadingHTTPServer:
    """A started stub server (background thread); `server_address[1]` is its port."""
    handler = type("Handler", (_Handler,), {"state": SlotState(latency_s, slots)})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    ).start()
    return httpd


def main(argv: list[str] | None = None) -> int:
    """Serve until stdin closes (the parent process ends or closes it)."""
    parser = argparse.ArgumentParser(prog="python -m bench.perf.slot_stub")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds a request holds a slot")
    parser.add_argument("--slots", type=int, default=4, help="requests decoded at once")
    args = parser.parse_args(argv)
    httpd = serve(max(0.0, args.latency), max(1, args.slots))
    print(httpd.server_address[1], flush=True)
    sys.stdin.read()
    httpd.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
