"""A recording OpenAI-compatible chat stub on 127.0.0.1, and where the shared data lives.

`JudgeStub(reply)` serves `POST /v1/chat/completions` from a real `ThreadingHTTPServer`
(random port, background thread), keeps every request body in full (`bodies`) and
answers with `reply(body)`. It checks nothing itself: tests compare what it received
with what upstream would send. `echo_auth=True` makes it a hostile server that echoes
the request's `Authorization` header in a 200 reply: every `{auth}` in the reply text is
replaced by it, and the reply's `model` carries it too.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from bench.loaders.resolve import PROJECT_ROOT

Reply = Callable[[dict[str, Any]], str]


def shared_data_dir() -> Path | None:
    """The shared data folder (`$BENCH_DATA_DIR`, else `../shared/data`), when it has judges/."""
    options = [os.environ.get("BENCH_DATA_DIR", ""), str(PROJECT_ROOT.parent / "shared" / "data")]
    options.append("/work/shared/data")
    for option in options:
        if option and (Path(option) / "judges").is_dir():
            return Path(option)
    return None


class JudgeStub:
    """Context manager running the stub; `base_url` ends in `/v1`."""

    def __init__(self, reply: Reply, *, echo_auth: bool = False) -> None:
        self.reply = reply
        self.echo_auth = echo_auth
        self.bodies: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None

    def __enter__(self) -> JudgeStub:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return

            def do_POST(self) -> None:  # noqa: N802 - http.server naming
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with stub._lock:
                    stub.bodies.append(body)
                text, model = stub.reply(body), str(body.get("model", "unknown"))
                if stub.echo_auth:
                    auth = self.headers.get("Authorization", "")
                    text, model = text.replace("{auth}", auth), f"{model} {auth}"
                payload = {
                    "id": "chatcmpl-stub",
                    "object": "chat.completion",
                    "created": 0,
                    "model": model,
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": text},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
                }
                data = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:<port>/v1`."""
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
