"""A fault-injecting OpenAI-compatible HTTP server on loopback, for provider tests.

It serves `POST /v1/chat/completions` and `POST /v1/embeddings` from a real
`ThreadingHTTPServer` on 127.0.0.1 (random port, background thread). Faults are
scripted (`fail_next`), permanent (`always`) or drawn at a seeded random rate
(`fault_rate`); without a fault it answers deterministically (unless `sampling` > 0):

- chat: what the offline answerer answers for the same messages; a request that
  carries a tool named `update_memory` gets a tool call with the offline rule
  extractor's facts (`{"items": []}` when the exchange cannot be read back);
- embeddings: WordLlama vectors of the configured dimension.

Like a real server it honours `max_tokens` (≈ 4 characters a token: a longer reply is
cut, `finish_reason: length`), `stop` sequences and `response_format: json_schema`
(a schema named `verdict` gets a JSON verdict, any other the `update_memory` arguments
as JSON). Emulations: a server that ignores `tools` (`ignore_tools`), a model whose
free-text verdicts are unparseable (`garbage_verdicts`), llama.cpp `GET /props` and
vLLM `GET /v1/models` (`serve_context`), and context overflow with each server's
wording (`Fault.http(400, message=LLAMACPP_OVERFLOW)` ...), and a reasoning model
(`reasoning_model`): it answers 400 with OpenAI's error bodies to `max_tokens`, a
`temperature` other than 1, `stop` and `top_p` (`tests.support.reasoning_replies`), spends a
fixed number of hidden reasoning tokens out of `max_completion_tokens` (a cap they use
up gets an empty reply, `finish_reason: length`) and reports them in
`completion_tokens_details`.

`sampling=p` imitates a sampling model, seeded: the first time a chat body is seen it
gets the deterministic reply; its n-th repeat (n >= 1) is varied with probability p,
drawn from a generator seeded by (seed, body, n) — a judge verdict flips, an answer
becomes a fixed wrong one — so replies depend only on how often the same request was
sent, not on thread timing (identical bodies must be sent one after another).

Every request is logged with a monotonic timestamp, the path, the model, whether an
Authorization header was present (never its value) and the fault applied.
"""

from __future__ import annotations

import hashlib
import json
import random
import socket
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from tests.support.fault_replies import (
    deterministic_chat_fn,
    judge_reply,
    update_memory_arguments,
    vary_reply,
)
from tests.support.reasoning_replies import reasoning_usage, rejection

ChatFn = Callable[[list[dict[str, Any]]], str]


@dataclass(frozen=True)
class Fault:
    """One injected fault: an HTTP status, a slow reply, a drop or a bad body."""

    kind: str
    """`status`, `slow`, `trickle`, `drop`, `malformed`, `empty` or `length`."""
    status: int = 500
    headers: tuple[tuple[str, str], ...] = ()
    delay_s: float = 0.0
    echo_auth: bool = False
    """Echo the Authorization header in the error body, as careless servers do."""
    message: str = ""
    """The error message of a `status` fault; empty means `injected <status>`."""

    @property
    def label(self) -> str:
        """Short name used in the request log, e.g. `429` or `drop`."""
        return str(self.status) if self.kind == "status" else self.kind

    @classmethod
    def http(cls, status: int, echo_auth: bool = False, message: str = "", **headers: str) -> Fault:
        """An error status; keyword headers use `_` for `-` (retry_after='1')."""
        pairs = tuple((k.replace("_", "-"), v) for k, v in headers.items())
        return cls("status", status=status, headers=pairs, echo_auth=echo_auth, message=message)

    @classmethod
    def slow(cls, delay_s: float) -> Fault:
        """Answer correctly, but only after `delay_s` seconds."""
        return cls("slow", delay_s=delay_s)

    @classmethod
    def trickle(cls, interval_s: float) -> Fault:
        """Answer correctly, but send the body one byte every `interval_s` seconds."""
        return cls("trickle", delay_s=interval_s)

    @classmethod
    def of(cls, kind: str) -> Fault:
        """`drop`, `malformed`, `empty` or `length`."""
        return cls(kind)


LLAMACPP_OVERFLOW = (
    "request (17702 tokens) exceeds the available context size (16384 tokens), try increasing it"
)
LLAMACPP_KV_FULL = "Context size has been exceeded."
VLLM_OVERFLOW = (
    "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens "
    "(4900 in the messages, 100 in the completion). Please reduce the length of the messages "
    "or completion."
)


def transient_faults(slow_s: float = 1.0) -> tuple[Fault, ...]:
    """The faults a robust client must survive by retrying."""
    return (
        Fault.http(429, retry_after="0"),
        Fault.http(500),
        Fault.http(502),
        Fault.http(503),
        Fault.slow(slow_s),
        Fault.of("drop"),
        Fault.of("malformed"),
    )


@dataclass(frozen=True)
class LoggedRequest:
    """One request as the server saw it."""

    t: float
    """`time.monotonic()` when the request arrived."""
    path: str
    """The URL path without its query string."""
    query: str
    model: str
    tools: tuple[str, ...]
    """Names of the tools the request carried."""
    auth_present: bool
    fault: str | None
    schema: str | None = None
    """Name of the `response_format` JSON Schema the request carried, if any."""
    max_tokens: int | None = None
    """The request's completion cap."""
    stop: tuple[str, ...] = ()
    """The request's stop sequences."""
    body: dict[str, Any] | None = field(default=None, compare=False)
    """The whole JSON body, as sent."""


@dataclass
class ServedUsage:
    """Requests answered (faults excluded) and the token usage reported for them."""

    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass
class _State:
    """Mutable server state shared by the handler threads."""

    chat_fn: ChatFn
    embed_dim: int
    fault_rate: float
    random_faults: tuple[Fault, ...]
    rng: random.Random
    scripted: deque[Fault] = field(default_factory=deque)
    permanent: Fault | None = None
    healthy_left: int = 0
    """Requests still served before `permanent` takes effect."""
    max_random_per_request: int = 2
    random_hits: Counter[str] = field(default_factory=Counter)
    log: list[LoggedRequest] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    embedder: Any = None
    in_flight: int = 0
    max_in_flight: int = 0
    ignore_tools: bool = False
    """Answer tool requests with plain text, as a server without a tool template does."""
    extraction_faults: deque[Fault] = field(default_factory=deque)
    """Faults for the next `update_memory` requests only (scripted after `scripted`)."""
    usage: dict[str, ServedUsage] = field(default_factory=dict)
    """What the server answered (and reported as usage), by kind: chat or embeddings."""
    sampling: float = 0.0
    """Chance that a repeated chat body gets a varied reply (see the module docstring)."""
    seed: int = 0
    """Seeds the sampling draws."""
    seen: Counter[str] = field(default_factory=Counter)
    """How often each chat body has been answered (sampling mode)."""

    def sampled(self, body: dict[str, Any], reply: str) -> str:
        """`reply`, or a varied one for a repeated body drawn to vary (sampling mode)."""
        if self.sampling <= 0:
            return reply
        key = json.dumps(body, sort_keys=True)
        with self.lock:
            occurrence = self.seen[key]
            self.seen[key] += 1
        digest = hashlib.sha256(f"{self.seed}:{occurrence}:{key}".encode()).hexdigest()
        if occurrence == 0 or random.Random(digest).random() >= self.sampling:
            return reply
        return vary_reply(reply)

    garbage_verdicts: bool = False
    """Answer judge prompts with prose unless the reply is schema-constrained."""
    context: dict[str, Any] | None = None
    """`{"style": "llamacpp"|"vllm", "n_ctx": int, "slots": int}` served on GET."""
    gets: list[str] = field(default_factory=list)
    """Paths of GET requests (context probes), kept apart from the POST log."""
    reasoning: int | None = None
    """Hidden reasoning tokens per chat reply of a reasoning model; None: an ordinary one."""

    def served(self, kind: str, prompt: int, completion: int = 0) -> None:
        """Add one answered request's reported usage to the tally."""
        with self.lock:
            tally = self.usage.setdefault(kind, ServedUsage())
            tally.requests += 1
            tally.prompt_tokens += prompt
            tally.completion_tokens += completion

    def next_fault(self, body: dict[str, Any]) -> Fault | None:
        """Scripted first, then the permanent fault, then a seeded random draw.

        Random faults hit one request body at most `max_random_per_request` times, so a
        client with enough attempts always gets through: outcomes stay deterministic.
        """
        with self.lock:
            if self.scripted:
                return self.scripted.popleft()
            if self.extraction_faults and "update_memory" in _tool_names(body):
                return self.extraction_faults.popleft()
            if self.permanent is not None:
                if not self.healthy_left:
                    return self.permanent
                self.healthy_left -= 1
                return None
            if self.fault_rate > 0 and self.rng.random() < self.fault_rate:
                key = json.dumps(body, sort_keys=True)
                if self.random_hits[key] < self.max_random_per_request:
                    self.random_hits[key] += 1
                    return self.rng.choice(self.random_faults)
            return None


class FaultServer:
    """Context manager running the fault-injecting server; `base_url` ends in `/v1`."""

    def __init__(
        self,
        *,
        fault_rate: float = 0.0,
        seed: int = 0,
        random_faults: tuple[Fault, ...] | None = None,
        chat_fn: ChatFn | None = None,
        embed_dim: int = 256,
        sampling: float = 0.0,
    ) -> None:
        self._state = _State(
            chat_fn=chat_fn or deterministic_chat_fn,
            embed_dim=embed_dim,
            fault_rate=fault_rate,
            random_faults=random_faults or transient_faults(),
            rng=random.Random(seed),
            sampling=sampling,
            seed=seed,
        )
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> FaultServer:
        handler = type("Handler", (_Handler,), {"state": self._state})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:<port>/v1`."""
        assert self._httpd is not None, "use FaultServer as a context manager"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def fail_next(self, *faults: Fault) -> None:
        """Apply these faults, in order, to the next requests."""
        with self._state.lock:
            self._state.scripted.extend(faults)

    def fail_next_extractions(self, *faults: Fault) -> None:
        """Apply these faults, in order, to the next `update_memory` tool requests."""
        with self._state.lock:
            self._state.extraction_faults.extend(faults)

    def ignore_tools(self, ignore: bool = True) -> None:
        """Drop `tools` from requests (reply in plain text), like llama.cpp without --jinja."""
        with self._state.lock:
            self._state.ignore_tools = ignore

    def garbage_verdicts(self, on: bool = True) -> None:
        """Reply to judge prompts with prose (no JSON) unless a JSON Schema constrains them."""
        with self._state.lock:
            self._state.garbage_verdicts = on

    def serve_context(self, style: str, n_ctx: int, slots: int = 1) -> None:
        """Serve llama.cpp `GET /props` (`style="llamacpp"`) or vLLM `GET /v1/models`."""
        with self._state.lock:
            self._state.context = {"style": style, "n_ctx": n_ctx, "slots": slots}

    def reasoning_model(self, reasoning_tokens: int | None = 40) -> None:
        """Behave as a reasoning model spending `reasoning_tokens` a reply (None: ordinary)."""
        with self._state.lock:
            self._state.reasoning = reasoning_tokens

    def always(self, fault: Fault | None, *, after: int = 0) -> None:
        """Apply `fault` to every request after the next `after` (None heals the server)."""
        with self._state.lock:
            self._state.permanent = fault
            self._state.healthy_left = after

    def set_fault_rate(self, rate: float) -> None:
        """Change the random transient-fault rate."""
        with self._state.lock:
            self._state.fault_rate = rate

    @property
    def requests(self) -> list[LoggedRequest]:
        """A snapshot of the request log."""
        with self._state.lock:
            return list(self._state.log)

    @property
    def gets(self) -> list[str]:
        """Paths of the GET requests (context probes) seen so far."""
        with self._state.lock:
            return list(self._state.gets)

    @property
    def max_in_flight(self) -> int:
        """Most requests the server was handling at the same time."""
        with self._state.lock:
            return self._state.max_in_flight

    def clear_log(self) -> None:
        """Forget the requests seen so far (and their usage tally)."""
        with self._state.lock:
            self._state.log.clear()
            self._state.usage.clear()

    def chat_usage(self) -> ServedUsage:
        """Chat completions answered since the last `clear_log`, with their usage."""
        with self._state.lock:
            return replace(self._state.usage.get("chat", ServedUsage()))

    def embedding_usage(self) -> ServedUsage:
        """Embedding requests answered since the last `clear_log`, with their usage."""
        with self._state.lock:
            return replace(self._state.usage.get("embeddings", ServedUsage()))


def max_in_window(times: list[float], window_s: float) -> int:
    """Most requests in any half-open window [t, t + window_s) of the given times."""
    ordered = sorted(times)
    best, start = 0, 0
    for end, t in enumerate(ordered):
        while t - ordered[start] >= window_s:
            start += 1
        best = max(best, end - start + 1)
    return best


class _Handler(BaseHTTPRequestHandler):
    """Routes the two endpoints and applies the fault drawn for each request."""

    state: _State
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        """Silence the default stderr access log."""

    def do_POST(self) -> None:  # noqa: N802 - http.server naming
        """Log the request, then fault or answer it."""
        arrived = time.monotonic()
        body = self._read_json()
        url = urlsplit(self.path)
        refused = self._refusal(url.path, body)
        fault = self.state.next_fault(body) if refused is None else None
        entry = LoggedRequest(
            t=arrived,
            path=url.path,
            query=url.query,
            model=str(body.get("model", "")),
            tools=tuple(_tool_names(body)),
            auth_present=bool(self.headers.get("Authorization")),
            fault=fault.label if fault else (refused["error"]["code"] if refused else None),
            schema=_schema_name(body),
            max_tokens=body.get("max_tokens"),
            stop=tuple(body.get("stop") or ()),
            body=body,
        )
        with self.state.lock:
            self.state.log.append(entry)
            self.state.in_flight += 1
            self.state.max_in_flight = max(self.state.max_in_flight, self.state.in_flight)
        try:
            if refused is not None:
                self._send(400, json.dumps(refused).encode(), ())
            else:
                self._respond(url.path.rstrip("/"), body, fault)
        except Exception as exc:  # a bug in the server: say so instead of dropping
            self._send(500, json.dumps({"error": {"message": repr(exc)}}).encode(), ())
        finally:
            with self.state.lock:
                self.state.in_flight -= 1

    def _refusal(self, path: str, body: dict[str, Any]) -> dict[str, Any] | None:
        """A reasoning model's 400 body for a chat request it rejects, else None."""
        if self.state.reasoning is None or not path.rstrip("/").endswith("/chat/completions"):
            return None
        return rejection(body)

    def do_GET(self) -> None:  # noqa: N802 - http.server naming
        """llama.cpp `/props` or vLLM `/v1/models`, when `serve_context` set one up.

        A permanent 401/403 (`always`) answers every GET too, as a server rejecting a key does.
        """
        path = urlsplit(self.path).path.rstrip("/")
        ctx = self.state.context
        with self.state.lock:
            self.state.gets.append(path)
            denied = self.state.permanent
        if denied is not None and denied.kind == "status" and denied.status in (401, 403):
            self._apply(denied)  # a rejected key is rejected on every path
            return
        if ctx and ctx["style"] == "llamacpp" and path == "/props":
            body = {
                "default_generation_settings": {"n_ctx": ctx["n_ctx"], "params": {}},
                "total_slots": ctx["slots"],
                "model_path": "/models/test.gguf",
            }
        elif ctx and ctx["style"] == "vllm" and path == "/v1/models":
            row = {"id": "test-model", "object": "model", "max_model_len": ctx["n_ctx"]}
            body = {"object": "list", "data": [row]}
        else:
            self._send(404, b'{"error": {"message": "File Not Found"}}', ())
            return
        self._send(200, json.dumps(body).encode(), ())

    def _respond(self, path: str, body: dict[str, Any], fault: Fault | None) -> None:
        if fault is not None and fault.kind == "slow":
            time.sleep(fault.delay_s)
            fault = None
        if fault is not None and self._apply(fault):
            return
        self._answer(path, body, fault)

    def _read_json(self) -> dict[str, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b"{}"
        try:
            parsed = json.loads(raw)
        except ValueError:
            return {}
        return parsed if isinstance(parsed, dict) else {}

    def _apply(self, fault: Fault) -> bool:
        """Send an error, drop or malformed body; False for faults shaped as answers."""
        if fault.kind == "drop":
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return True
        if fault.kind == "malformed":
            self._send(200, b'{"id": "x", "choices": [', ())
            return True
        if fault.kind == "status":
            message = fault.message or f"injected {fault.status}"
            if fault.echo_auth:
                message += f" for {self.headers.get('Authorization')}"
            err = {"error": {"message": message, "type": "injected"}}
            self._send(fault.status, json.dumps(err).encode(), fault.headers)
            return True
        return False

    def _answer(self, path: str, body: dict[str, Any], fault: Fault | None) -> None:
        if path.endswith("/embeddings"):
            payload = self._embeddings(body)
        elif path.endswith("/chat/completions"):
            payload = self._chat(body, fault)
        else:
            self._send(404, b'{"error": {"message": "not found"}}', ())
            return
        if fault is not None and fault.kind == "trickle":
            self._trickle(json.dumps(payload).encode(), fault.delay_s)
            return
        self._send(200, json.dumps(payload).encode(), ())

    def _trickle(self, body: bytes, interval_s: float) -> None:
        """Headers at once, then the body one byte every `interval_s` (until the client goes)."""
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            for i in range(len(body)):
                self.wfile.write(body[i : i + 1])
                self.wfile.flush()
                time.sleep(interval_s)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up at its deadline

    def _chat(self, body: dict[str, Any], fault: Fault | None) -> dict[str, Any]:
        messages = body.get("messages") or []
        tool_names = _tool_names(body)
        message: dict[str, Any] = {"role": "assistant", "content": None}
        finish = "stop"
        if fault is not None and fault.kind in ("empty", "length"):
            message["content"] = ""
            finish = "length" if fault.kind == "length" else "stop"
        elif "update_memory" in tool_names and self.state.ignore_tools:
            message["content"] = "Sure! Here are the facts: Caroline likes painting."
        elif "update_memory" in tool_names:
            arguments = update_memory_arguments(messages)
            message["tool_calls"] = [_tool_call("update_memory", arguments)]
            finish = "tool_calls"
        elif (schema := _schema_name(body)) is not None:
            reply = _schema_reply(schema, messages)
            message["content"] = self.state.sampled(body, reply) if schema == "verdict" else reply
        elif self.state.garbage_verdicts and any(map(judge_reply, _users(messages))):
            message["content"] = "Well, the answer looks about right to me overall."
        else:
            message["content"] = self.state.sampled(body, self.state.chat_fn(messages))
        thought = self.state.reasoning or 0
        if message["content"]:
            message["content"], finish = _limit(message["content"], _visible(body, thought), finish)
        prompt_chars = sum(len(str(m.get("content") or "")) for m in messages)
        prompt = prompt_chars // 4 + 1
        visible = len(message["content"] or "") // 4 + 1
        self.state.served("chat", prompt, visible + thought)
        usage = (
            _usage(prompt, visible)
            if self.state.reasoning is None
            else reasoning_usage(prompt, visible, thought)
        )
        return {
            "id": "chatcmpl-fault",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "unknown"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage,
        }

    def _embeddings(self, body: dict[str, Any]) -> dict[str, Any]:
        texts = body.get("input") or []
        texts = [texts] if isinstance(texts, str) else [str(t) for t in texts]
        with self.state.lock:
            if self.state.embedder is None:
                from bench.providers.offline_embed import WordLlamaEmbedder

                self.state.embedder = WordLlamaEmbedder(dim=self.state.embed_dim)
            embedder = self.state.embedder
        vectors = embedder.embed(texts)
        data = [
            {"object": "embedding", "index": i, "embedding": [float(x) for x in row]}
            for i, row in enumerate(vectors)
        ]
        tokens = sum(len(t) // 4 + 1 for t in texts)
        self.state.served("embeddings", tokens)
        return {
            "object": "list",
            "data": data,
            "model": body.get("model", "unknown"),
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }

    def _send(self, status: int, body: bytes, headers: tuple[tuple[str, str], ...]) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for key, value in headers:
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (timeout): nothing to do


def _limit(text: str, body: dict[str, Any], finish: str) -> tuple[str, str]:
    """Cut at the first stop sequence, then at `max_tokens` (4 chars a token: `length`)."""
    for stop in body.get("stop") or ():
        if stop and stop in text:
            text = text[: text.index(stop)]
    cap = body.get("max_tokens")
    if isinstance(cap, int) and len(text) > cap * 4:
        return text[: cap * 4], "length"
    return text, finish


def _visible(body: dict[str, Any], thought: int) -> dict[str, Any]:
    """`body` with the cap left for visible text: a reasoning model's
    `max_completion_tokens` less its hidden reasoning (at least 0)."""
    cap = body.get("max_completion_tokens")
    if not isinstance(cap, int):
        return body
    return {**body, "max_tokens": max(0, cap - thought)}


def _users(messages: list[dict[str, Any]]) -> list[str]:
    return [str(m.get("content")) for m in messages if m.get("role") == "user"]


def _schema_name(body: dict[str, Any]) -> str | None:
    fmt = body.get("response_format")
    if not isinstance(fmt, dict) or fmt.get("type") != "json_schema":
        return None
    return str((fmt.get("json_schema") or {}).get("name") or "")


def _schema_reply(schema: str, messages: list[dict[str, Any]]) -> str:
    """What constrained decoding yields: a verdict, or the `update_memory` arguments."""
    if schema == "verdict":
        first_user = next((str(m.get("content")) for m in messages if m.get("role") == "user"), "")
        return judge_reply(first_user) or json.dumps({"reasoning": "?", "correct": False})
    return json.dumps(update_memory_arguments(messages))


def _tool_names(body: dict[str, Any]) -> list[str]:
    return [str(t.get("function", {}).get("name")) for t in body.get("tools") or []]


def _tool_call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "call_0",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def _usage(prompt: int, completion: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
