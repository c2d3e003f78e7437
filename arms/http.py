"""The `http` arm: any memory service behind a REST API (reference contract: docs/live.md).

Requests are templates (method, path, JSON body with `{placeholders}`), so a service
with another shape needs YAML, not Python. Calls are retried with tenacity (429, 5xx,
timeouts, connection errors; never other 4xx; `Retry-After` honoured), bounded in
total time with a circuit breaker (arms/live_calls.py), optionally rate limited, and
timed (service latency per call). A bearer token is read from the environment variable
named by `token_env`; the token itself is never stored, and it is masked
(`bench.providers.secrets.redact`) in every message, record and log line, including
a reply that echoes it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import quote

import httpx
import tenacity

from arms.live import LiveMemoryArm, LiveOptions, reconnect_and_delete
from arms.live_calls import CallTimeout, CircuitBreaker, ServerWait
from arms.live_owner import listed_names
from arms.live_replies import ContractError, at, fill
from arms.neuromorphic.exchange import Exchange
from bench.arm import ArmServices
from bench.arm.live_state import NamespaceLedger
from bench.errors import BenchError
from bench.providers.deadline import DeadlineRunner, check_deadline, time_left
from bench.providers.ratelimit import SlidingWindowLimiter
from bench.providers.retry import parse_retry_after
from bench.providers.secrets import read_service_token, redact
from bench.types import AskedQuestion, Context, ServiceAnswer
from bench.untrusted import UntrustedJSONError, parse_json


@dataclass
class RequestSpec:
    """One request template: method, path under `base_url`, JSON body (or None)."""

    method: str = "POST"
    """HTTP method, e.g. `GET`, `POST`, `DELETE`."""
    path: str = "/"
    """Path under `base_url`; `{namespace}` and other placeholders are str.format'ed."""
    body: Any = None
    """JSON body template (`"{name}"` alone becomes the typed value); None sends none."""


def _req(method: str, path: str, body: Any = None) -> Any:
    return field(default_factory=lambda: RequestSpec(method, path, body))


@dataclass
class HttpConfig(LiveOptions):
    """Where the service is and how its requests and responses are shaped."""

    kind: str = "http"
    """The arm kind: always `http`."""
    base_url: str = "http://127.0.0.1:8765"
    """The service's root URL; every request path is appended to it."""
    token_env: str | None = None
    """Environment variable holding a bearer token (the token is never stored)."""
    timeout_s: float = 30.0
    """Total seconds one attempt may take, whole reply included (not per read)."""
    max_attempts: int = 4
    """Tries per request (429, 5xx and transport errors are retried)."""
    max_retry_time_s: float = 60.0
    """Total seconds for one request, every attempt and wait included."""
    requests_per_minute: int | None = None
    """Client-side rate limit; None means unlimited."""
    health: RequestSpec = _req("GET", "/health")
    """The reachability probe (one attempt, at start-up)."""
    create: RequestSpec = _req("POST", "/v1/projects", {"name": "{name}"})
    """Creates a namespace; `{name}` is filled, the id is read at `create_id_path`."""
    delete: RequestSpec = _req("DELETE", "/v1/projects/{namespace}")
    """Deletes the namespace `{namespace}` (cleanup)."""
    listing: RequestSpec = _req("GET", "/v1/projects")
    """Lists every namespace (id and name, read at `list_path`): a new namespace and one
    about to be deleted are checked against it (arms/live_owner.py)."""
    capture: RequestSpec = _req(
        "POST",
        "/v1/projects/{namespace}/capture",
        {"messages": "{messages}", "date_time": "{date_time}", "session": "{session}"},
    )
    """The `capture` write path: one exchange of `{messages}` with its date."""
    remember: RequestSpec = _req(
        "POST",
        "/v1/projects/{namespace}/memories",
        {"text": "{text}", "metadata": {"bench": "{unit_id}"}, "date_time": "{date_time}"},
    )
    """The `remember` write path: one unit's `{text}` with its `{unit_id}` marker."""
    search: RequestSpec = _req(
        "POST", "/v1/projects/{namespace}/search", {"query": "{query}", "k": "{k}"}
    )
    """Search `{namespace}` for `{query}`, asking for `{k}` results."""
    service_answer: bool = False
    """Ask the service's answer endpoint too, once per question right after the search,
    and record its answer instead of asking the harness answerer (`answer_path:
    service` in records and reports). Off by default: every arm is then answered by
    the same harness answerer, which is what makes arms comparable."""
    answer: RequestSpec = _req(
        "POST", "/v1/projects/{namespace}/answer", {"query": "{query}", "k": "{k}"}
    )
    """The answer endpoint (used only with `service_answer`): `{namespace}`, `{query}`, `{k}`."""
    answer_text_path: str = "answer"
    """Dotted path to the answer text in an answer reply."""
    answer_model_path: str | None = "model"
    """Dotted path to who answered (model name) in an answer reply; None records `service`."""


class _Retryable(Exception):
    """A 429/5xx answer worth another attempt, with the server's requested wait."""

    def __init__(self, message: str, retry_after_s: float | None) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


MAX_REPLY_BYTES = 64 * 1024 * 1024
"""Largest reply body read from a service (a bigger one is a ContractError)."""


class ServiceRefused(ContractError):
    """The service answered a 4xx other than 401/403; `status` is its HTTP status."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


GONE = (404, 410)
"""Statuses of a delete that mean the namespace is already gone (counted as deleted)."""


def fill_path(template: str, values: dict[str, Any]) -> str:
    """`template` with each placeholder percent-encoded as one path segment.

    Every string or number is quoted with no safe characters, so a value can never add
    a path step, a query or a fragment (ids are checked before they get here, too).
    """
    quoted = {
        k: quote(str(v), safe="") if isinstance(v, str | int | float) else v
        for k, v in values.items()
    }
    return template.format(**quoted)


class HttpBackend:
    """REST transport: templated requests, retries, rate limit, one-line errors."""

    def __init__(self, name: str, cfg: HttpConfig) -> None:
        self.name, self.cfg = name, cfg
        self.where = cfg.base_url.rstrip("/")
        headers = {}
        if cfg.token_env:  # remembered: every message and record below is redacted
            token = read_service_token(cfg.token_env, f"arm_options.{name}.token_env")
            headers["Authorization"] = f"Bearer {token}"
        self.client = httpx.Client(base_url=self.where, headers=headers, timeout=cfg.timeout_s)
        self.limiter = SlidingWindowLimiter(cfg.requests_per_minute, None)
        self.breaker = CircuitBreaker(name, cfg.breaker_timeouts)
        self.wait = ServerWait()
        self._runner = DeadlineRunner(f"http-{name}")

    def call(self, spec: RequestSpec, values: dict[str, Any], *, attempts: int = 0) -> Any:
        """Send one templated request (with retries); the JSON reply, or None if empty.

        Bounded in time (arms/live_calls.py): each attempt must deliver its whole reply
        within `timeout_s` (or what is left of `max_retry_time_s`, if less), and no retry
        wait starts that would end past `max_retry_time_s`. Retried: 429, 5xx (after the
        server's `Retry-After`, if any), timeouts, transport errors.
        """
        path = fill_path(spec.path, values)
        body = fill(spec.body, values) if spec.body is not None else None
        where = f"{spec.method} {self.where}{path}"
        self.breaker.check(where)
        deadline = time.monotonic() + self.cfg.max_retry_time_s

        def attempt() -> httpx.Response:
            budget = min(self.cfg.timeout_s, deadline - time.monotonic())
            if budget <= 0:
                raise CallTimeout("no time left for another attempt")
            reservation = self.limiter.acquire(0) if self.limiter.enabled else None
            try:
                reply = self._send(spec.method, path, body, budget)
            finally:
                if reservation is not None:
                    self.limiter.settle(reservation, 0)
            if reply.status_code == 429 or reply.status_code >= 500:
                raise _Retryable(f"HTTP {reply.status_code}", parse_retry_after(reply.headers))
            return reply

        retrying = self._retrying(attempts or self.cfg.max_attempts)
        try:
            reply = retrying(attempt)
        except (CallTimeout, httpx.TimeoutException):
            self.breaker.timed_out(where)
            tries = retrying.statistics.get("attempt_number", 1)
            raise CallTimeout(
                f"{where}: no complete reply in time ({tries} attempt(s), "
                f"timeout_s={self.cfg.timeout_s:g} each, max_retry_time_s="
                f"{self.cfg.max_retry_time_s:g} in all); check the service or "
                f"raise arm_options.{self.name}.timeout_s"
            ) from None
        except httpx.TransportError as exc:
            raise BenchError(
                f"{where}: cannot reach the service ({type(exc).__name__}); "
                f"check arm_options.{self.name}.base_url"
            ) from None
        except _Retryable as exc:
            raise BenchError(f"{where}: {exc} after retries") from None
        self.breaker.succeeded()
        return self._parse(spec, where, reply)

    def _retrying(self, attempts: int) -> tenacity.Retrying:
        """The retry policy: `attempts` at most, no wait ending past `max_retry_time_s`."""
        return tenacity.Retrying(
            stop=tenacity.stop_after_attempt(attempts)
            | tenacity.stop_before_delay(self.cfg.max_retry_time_s),
            wait=self.wait,
            retry=tenacity.retry_if_exception_type((_Retryable, httpx.TransportError, CallTimeout)),
            reraise=True,
        )

    def _send(self, method: str, path: str, body: Any, budget: float) -> httpx.Response:
        """One attempt, whole reply within `budget` seconds (CallTimeout otherwise).

        The providers' one deadline rule (`bench.providers.deadline`): the transfer runs
        in a worker thread that stops reading once its deadline has passed; the caller
        waits at most `budget`, so a trickling or silent reply can hold the call no longer.
        """
        return self._runner.run(budget, self._transfer, method, path, body)

    def _transfer(self, method: str, path: str, body: Any) -> httpx.Response:
        left = max(0.001, time_left() or 0)
        with self.client.stream(method, path, json=body, timeout=left) as reply:
            chunks, size = [], 0
            for chunk in reply.iter_bytes():
                chunks.append(chunk)
                size += len(chunk)
                check_deadline()
                if size > MAX_REPLY_BYTES:
                    raise ContractError(
                        f"{method} {self.where}{path}: reply larger than {MAX_REPLY_BYTES} bytes"
                    )
            return httpx.Response(
                reply.status_code, headers=reply.headers, content=b"".join(chunks)
            )

    def _parse(self, spec: RequestSpec, where: str, reply: httpx.Response) -> Any:
        if reply.status_code in (401, 403):
            hint = (
                f"set {self.cfg.token_env}"
                if self.cfg.token_env
                else (f"set arm_options.{self.name}.token_env to the variable holding the token")
            )
            raise BenchError(f"{where}: HTTP {reply.status_code} unauthorised; {hint}")
        if reply.status_code >= 400:
            body = redact(reply.text[:200])  # services echo what they were sent
            raise ServiceRefused(
                f"{where}: HTTP {reply.status_code} {body!r}; check the request template",
                reply.status_code,
            )
        if not reply.content:
            return None
        try:
            return parse_json(reply.content, where)
        except UntrustedJSONError as exc:  # nested too deep, huge numbers, not UTF-8, ...
            raise ContractError(f"{where}: response is not usable JSON ({exc.what})") from None

    def probe(self) -> None:
        """Reachable and authorised: the health route (one attempt), then a listing call."""
        self.call(self.cfg.health, {}, attempts=1)

    def create(self, name: str) -> Any:
        """Create a namespace named `name`; its id."""
        reply = self.call(self.cfg.create, {"name": name})
        where = f"{self.cfg.create.method} {self.where}{self.cfg.create.path}"
        return at(reply, self.cfg.create_id_path, where, f"arm_options.{self.name}.create_id_path")

    def names(self) -> dict[str, str] | None:
        """Every namespace the service lists, id -> name; None without `list_path`."""
        if self.cfg.list_path is None:
            return None
        where = f"{self.cfg.listing.method} {self.where}{self.cfg.listing.path}"
        try:
            reply = self.call(self.cfg.listing, {})
        except ServiceRefused as exc:
            if exc.status not in (*GONE, 405):
                raise
            raise ContractError(
                f"{where}: HTTP {exc.status}: no namespace listing; fix arm_options."
                f"{self.name}.listing, or set list_path=null (a new namespace is then "
                "checked to be empty)"
            ) from None
        return listed_names(reply, self.cfg, where, self.name)

    def delete(self, namespace: str) -> None:
        """Delete a namespace (already gone counts as deleted)."""
        try:
            self.call(self.cfg.delete, {"namespace": namespace})
        except ServiceRefused as exc:
            if exc.status not in GONE:  # already gone is what we want
                raise

    def capture(self, namespace: str, exchange: Exchange, messages: list[Any]) -> None:
        """Write one exchange through the service's capture path."""
        self.call(
            self.cfg.capture,
            {
                "namespace": namespace,
                "messages": messages,
                "date_time": exchange.date_time,
                "session": exchange.session,
            },
        )

    def remember(self, namespace: str, text: str, unit_id: str, date_time: str) -> None:
        """Store one unit's text verbatim, with its marker."""
        self.call(
            self.cfg.remember,
            {"namespace": namespace, "text": text, "unit_id": unit_id, "date_time": date_time},
        )

    def search(self, namespace: str, query: str, k: int) -> Any:
        """The raw search reply for `query` (top `k`)."""
        return self.call(self.cfg.search, {"namespace": namespace, "query": query, "k": k})

    def answer(self, namespace: str, query: str, k: int) -> ServiceAnswer:
        """The service's own answer to `query` (its answer endpoint), with the call's time."""
        cfg, started = self.cfg, time.perf_counter()
        reply = self.call(cfg.answer, {"namespace": namespace, "query": query, "k": k})
        ms = (time.perf_counter() - started) * 1000
        where = f"{cfg.answer.method} {self.where}{cfg.answer.path}"
        text = at(reply, cfg.answer_text_path, where, f"arm_options.{self.name}.answer_text_path")
        model = (
            at(reply, cfg.answer_model_path, where, f"arm_options.{self.name}.answer_model_path")
            if cfg.answer_model_path
            else None
        )
        return ServiceAnswer(
            redact(str(text)), round(ms, 3), redact(f"service:{model or self.where}")
        )

    def close(self) -> None:
        """Release the connection (a transfer past its deadline ends by itself)."""
        self._runner.close()
        self.client.close()


class HttpArm(LiveMemoryArm):
    """The `http` arm: `LiveMemoryArm` over `HttpBackend`, with the optional answer endpoint."""

    def __init__(self, name: str, config: HttpConfig, services: ArmServices) -> None:
        self.http = HttpBackend(name, config)
        super().__init__(name, config, services, self.http)

    def _probe_more(self, namespace: str, query: str) -> None:
        """With `service_answer`, the answer endpoint's shape is checked at start-up too."""
        if self.http.cfg.service_answer:
            self.http.answer(namespace, query, 1)

    def retrieve(self, question: AskedQuestion) -> Context:
        """Search (as every live arm); with `service_answer`, also ask the service to answer.

        The answer is fetched here, with the retrieval, so `phase=predict` stores it and
        `phase=evaluate` calls nothing.
        """
        context = super().retrieve(question)
        if not self.http.cfg.service_answer:
            return context
        started = time.perf_counter()
        answer = self.http.answer(context.meta["namespace"], question.question, self.options.k)
        self.calls.timed("answer", started)
        return replace(context, service_answer=answer)


def delete_leftovers(name: str, options: HttpConfig, ledger: NamespaceLedger) -> int:
    """bench.cleanup's hook: connect with the command's options, delete what is listed."""
    return reconnect_and_delete(name, options, ledger, HttpBackend)
