"""Chat completions from any OpenAI-compatible endpoint, cached, limited and retried.

The request is `model`, `messages`, `temperature`, `max_tokens` and, per call
(`CallOptions`), a lower completion cap, stop sequences and a JSON Schema the reply must
match (`response_format`, sent only when the endpoint's `json_schema` flag is set), plus
`tools` for the extractor. A reasoning endpoint sends `max_completion_tokens` and
`reasoning_effort` instead of the sampling parameters (`bench.providers.reasoning`); an
`auto` one learns it from the first 400 and asks that call again. Identical requests
made at the same time by several threads (two arms giving the same answer to one
judge; neuromorphic and tuned extracting the same exchange) are sent once, whatever the
cache mode (single-flight on the cache key): the first sends it, the others wait for its
reply (or its failure, raised in each of them) and are counted as `coalesced`, with no
HTTP request, tokens or cost of their own. A shared reply is not `cached` (it was made in
this run, for this request), so twins read the same whichever of them sent. Only requests
that overlap in time are shared: one made after the first ended is a cache hit, or, with
the cache off, sent again. A response
with neither text nor a tool call (including `finish_reason: length` with empty text)
raises ProviderError: an empty answer is never scored silently. Every reply, 200s
included, has its secrets masked (`bench.providers.secrets.redact_chat`) before it is
cached, returned or relayed. `forget` deletes the
cached reply to one request, for callers that find a reply unusable after the fact.
"""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import Future
from dataclasses import replace
from typing import Any

from bench.config import EndpointConfig
from bench.errors import ProviderError
from bench.providers.accounting import Accountant, Price
from bench.providers.base import CallOptions, Message, RequestParams, Tool
from bench.providers.cache import ResponseCache, cache_key
from bench.providers.chat_rows import reply_from_row, reply_row, row_problem
from bench.providers.deployment import AttemptCounter, Deployment
from bench.providers.reasoning import (
    ReasoningSwitch,
    completion_cap,
    reasoning_mode,
    reasoning_params,
)
from bench.providers.retry import EmptyCompletion, MalformedResponse
from bench.providers.secrets import redact_chat
from bench.typed_json import JSONObject
from bench.types import ChatResult, Usage


class SamplingRejected(ProviderError):
    """An `auto` endpoint's request was rejected by a reasoning model; ask it again."""

    def __init__(self, http_requests: int) -> None:
        super().__init__("the model rejected the sampling parameters")
        self.http_requests = http_requests


def estimate_tokens(messages: list[Message], tools: list[Tool] | None, out: int) -> int:
    """A cheap upper-ish estimate for the limiter: ~4 characters per token, plus output."""
    chars = len(json.dumps(messages, ensure_ascii=False))
    if tools:
        chars += len(json.dumps(tools, ensure_ascii=False))
    return chars // 4 + out


class OpenAIChat:
    """A `ChatProvider` for one role (answerer, extractor or `judge:<id>`)."""

    def __init__(
        self,
        cfg: EndpointConfig,
        *,
        role: str,
        deployment: Deployment,
        cache: ResponseCache,
        accountant: Accountant,
    ) -> None:
        self.model = cfg.model
        self.json_schema = cfg.json_schema
        self.role = role
        self._cfg = cfg
        self._deployment = deployment
        self._cache = cache
        self._accountant = accountant
        self._price = Price(cfg.price_prompt_per_1k, cfg.price_completion_per_1k)
        self._lock = threading.Lock()
        self._pending: dict[str, Future[ChatResult]] = {}
        where = f"{role} at {deployment.base_url} (model {cfg.model})"
        self.reasoning = ReasoningSwitch(reasoning_mode(cfg.reasoning, f"{role}.reasoning"), where)

    def complete(
        self,
        messages: list[Message],
        *,
        tools: list[Tool] | None = None,
        prompt_version: str = "",
        options: CallOptions | None = None,
    ) -> ChatResult:
        """Return the completion (from the cache when possible); ProviderError on failure.

        On an `auto` endpoint a reasoning model's 400 turns reasoning mode on; the call is
        then asked again (its cache key is the reasoning parameters'), once.
        """
        started = time.perf_counter()
        try:
            return self._complete(messages, tools, prompt_version, options, started, 0)
        except SamplingRejected as rejected:
            extra = rejected.http_requests
            return self._complete(messages, tools, prompt_version, options, started, extra)

    def _complete(
        self,
        messages: list[Message],
        tools: list[Tool] | None,
        prompt_version: str,
        options: CallOptions | None,
        started: float,
        extra: int,
    ) -> ChatResult:
        """`complete` with the endpoint's current parameters.

        `extra` HTTP requests were spent on this call already (a rejected first ask).
        """
        params = self.params_for(options)
        key = self._key(messages, tools, prompt_version, params)
        hit = self._cached(key)  # None whenever the cache mode does not read
        if hit is not None:
            return self._hit(hit, started, extra)
        with self._lock:
            pending = self._pending.get(key)
            owner = pending is None
            if pending is None:
                pending = self._pending[key] = Future()
        if not owner:  # the same request is in flight on another thread: share its result
            return self._shared(pending, started, extra)
        try:  # it may have finished (and been stored) just before we registered
            hit = self._cached(key)
            result = (
                self._hit(hit, started, extra)
                if hit is not None
                else self._fetch(messages, params, tools, key, started, extra)
            )
            pending.set_result(result)
            return result
        except BaseException as exc:
            pending.set_exception(exc)
            raise
        finally:
            with self._lock:
                self._pending.pop(key, None)

    def forget(
        self,
        messages: list[Message],
        *,
        tools: list[Tool] | None = None,
        prompt_version: str = "",
        options: CallOptions | None = None,
    ) -> None:
        """Delete the cached reply to this exact request, so the next run asks the server again.

        Callers use it when a reply turned out unusable (an unparsable verdict, an answer
        empty after post-processing); a no-op unless the cache mode writes.
        """
        self._cache.delete(self.request_key(messages, tools, prompt_version, options))

    def request_key(
        self,
        messages: list[Message],
        tools: list[Tool] | None = None,
        prompt_version: str = "",
        options: CallOptions | None = None,
    ) -> str:
        """The cache key this request has now (the dry run looks it up)."""
        return self._key(messages, tools, prompt_version, self.params_for(options))

    def params_for(self, options: CallOptions | None = None) -> RequestParams:
        """The parameters sent now: reasoning ones in reasoning mode, else the sampling ones."""
        if self.reasoning.on:
            return reasoning_params(self._cfg, options, json_schema=self.json_schema)
        return self._params(options)

    def max_completion(self, options: CallOptions | None = None) -> int:
        """The most completion tokens one call may use; an `auto` endpoint may switch."""
        caps = [completion_cap(self.params_for(options))]
        if self.reasoning.mode == "auto":
            caps.append(completion_cap(reasoning_params(self._cfg, options, json_schema=False)))
        return max(caps)

    def _params(self, options: CallOptions | None = None) -> RequestParams:
        """The sampling parameters sent: the endpoint's, narrowed by the call's options.

        Keys appear only when set, so requests without options keep their old cache keys.
        """
        params: RequestParams = {
            "temperature": self._cfg.temperature,
            "max_tokens": self._cfg.max_tokens,
        }
        if options is None:
            return params
        if options.max_tokens is not None:
            params["max_tokens"] = max(1, min(self._cfg.max_tokens, options.max_tokens))
        if options.stop:
            params["stop"] = list(options.stop[:4])
        if options.json_schema is not None and self.json_schema:
            params["response_format"] = options.json_schema.response_format()
        return params

    def _key(
        self,
        messages: list[Message],
        tools: list[Tool] | None,
        prompt_version: str,
        params: RequestParams,
    ) -> str:
        """The cache key of a request: everything that determines the reply, never the key."""
        return cache_key(
            kind="chat",
            base_url=self._deployment.base_url,
            model=self.model,
            messages=messages,
            params=params,
            tools=tools,
            prompt_version=prompt_version,
        )

    def _fetch(
        self,
        messages: list[Message],
        params: RequestParams,
        tools: list[Tool] | None,
        key: str,
        started: float,
        extra: int = 0,
    ) -> ChatResult:
        """Send the request (limited, retried), store and account for the result."""
        counter = AttemptCounter()
        try:
            result = self._deployment.call(
                self.role,
                lambda client: _request(client, self.model, messages, params, tools),
                estimated_tokens=estimate_tokens(messages, tools, completion_cap(params)),
                used_tokens=lambda r: r.usage.prompt_tokens + r.usage.completion_tokens or None,
                counter=counter,
            )
        except Exception as exc:
            if self.reasoning.detect(exc, params):
                raise SamplingRejected(extra + counter.n) from exc
            self._record_failure(extra + counter.n, started)
            raise
        result = _with_latency(redact_chat(result), _ms_since(started))  # before it is stored
        self._cache.put_json(key, "chat", reply_row(result))
        self._record(result, http_requests=extra + counter.n)
        return result

    def _cached(self, key: str) -> JSONObject | None:
        """The cached reply under `key`, or None; a row that is no chat reply is moved aside."""
        hit = self._cache.get_json(key)
        if hit is None or (problem := row_problem(hit)) is None:
            return hit
        self._cache.quarantine(key, problem)
        return None

    def _hit(self, stored: JSONObject, started: float, extra: int = 0) -> ChatResult:
        """A cached reply carries its original latency; accounting gets the lookup time."""
        lookup_ms = _ms_since(started)
        original = stored.get("latency_ms")
        latency = float(original) if isinstance(original, int | float) else lookup_ms
        result = redact_chat(reply_from_row(stored, cached=True, latency_ms=latency))  # older rows
        self._record(_with_latency(result, lookup_ms), http_requests=extra)
        return result

    def _shared(self, pending: Future[ChatResult], started: float, extra: int) -> ChatResult:
        """The reply of the identical request in flight (its failure is raised here too)."""
        try:
            result = pending.result()
        except SamplingRejected:
            raise SamplingRejected(0) from None  # ask again, as the owner does
        except Exception:
            self._record_failure(extra, started)
            raise
        waited = _with_latency(result, _ms_since(started))  # the caller keeps the original
        self._record(waited, http_requests=extra, coalesced=not result.cached)
        return result

    def _record_failure(self, http_requests: int, started: float) -> None:
        self._accountant.record(
            self.role,
            self.model,
            http_requests=http_requests,
            failed=True,
            latency_ms=_ms_since(started),
        )

    def _record(self, result: ChatResult, *, http_requests: int, coalesced: bool = False) -> None:
        self._accountant.record(
            self.role,
            self.model,
            http_requests=http_requests,
            cached=result.cached,
            coalesced=coalesced,
            usage=result.usage,
            latency_ms=result.latency_ms,
            price=self._price,
        )


def _request(
    client: Any,
    model: str,
    messages: list[Message],
    params: RequestParams,
    tools: list[Tool] | None,
) -> ChatResult:
    """One HTTP attempt, parsed; raises MalformedResponse / EmptyCompletion."""
    extra = {"tools": tools} if tools else {}
    response = client.chat.completions.create(model=model, messages=messages, **params, **extra)
    choices = getattr(response, "choices", None)
    if not choices or getattr(choices[0], "message", None) is None:
        raise MalformedResponse("no choices in the response body")
    choice = choices[0]
    text = choice.message.content or ""
    tool_calls = tuple(
        {"name": tc.function.name, "arguments": tc.function.arguments or "{}"}
        for tc in choice.message.tool_calls or ()
        if getattr(tc, "function", None) is not None
    )
    finish = choice.finish_reason or "stop"
    if not text.strip() and not tool_calls:
        raise EmptyCompletion(f"empty completion (finish_reason={finish}{_hint(finish, params)})")
    return ChatResult(
        text=text,
        model=getattr(response, "model", None) or model,
        usage=_usage(response.usage),
        finish_reason=finish,
        tool_calls=tool_calls,
    )


def _hint(finish: str, params: RequestParams) -> str:
    if finish != "length":
        return ""
    if "max_completion_tokens" in params:
        return "; raise max_completion_tokens (hidden reasoning counts against it)"
    return "; raise max_tokens"


def _usage(usage: Any) -> Usage:
    """The reported usage; reasoning tokens from `completion_tokens_details` when given."""
    details = getattr(usage, "completion_tokens_details", None)
    return Usage(
        prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
        completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        reasoning_tokens=int(getattr(details, "reasoning_tokens", 0) or 0),
    )


def _with_latency(result: ChatResult, latency_ms: float) -> ChatResult:
    return replace(result, latency_ms=latency_ms)


def _ms_since(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0
