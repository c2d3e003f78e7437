"""Reasoning models (OpenAI gpt-5, o-series): what they are sent, and detecting them once.

Such a model answers HTTP 400 to the parameters every other chat model takes:
`max_tokens` (`unsupported_parameter`: use `max_completion_tokens`), a `temperature`
other than 1 (`unsupported_value`), and on several of them `stop` and `top_p`. An
endpoint in reasoning mode sends instead

    {"max_completion_tokens": max_completion_tokens or max_tokens,
     "reasoning_effort": reasoning_effort (only when set),
     "response_format": ... (only when the call asks for a schema and the endpoint has one)}

The cap counts the hidden reasoning too, so a call's own lower cap (an answer's 64
tokens) does not narrow it. `reasoning: auto` starts with the ordinary parameters; the
first 400 that rejects one of them (`rejected_parameter`) turns the endpoint's
`ReasoningSwitch` on, once, with one log line, and the caller asks again. The cache key
is over the parameters sent, so an ordinary endpoint keeps its keys.
"""

from __future__ import annotations

import logging
import re
import threading
from typing import TYPE_CHECKING

from bench.errors import ConfigError
from bench.providers.base import CallOptions, RequestParams
from bench.providers.secrets import redact

if TYPE_CHECKING:
    from bench.config import EndpointConfig

log = logging.getLogger("bench.providers")

MODES = ("false", "true", "auto")
"""Values of an endpoint's `reasoning` setting (YAML booleans arrive as `True`/`False`)."""

DROPPED = ("max_tokens", "temperature", "top_p", "stop")
"""Parameters reasoning mode never sends; a 400 rejecting one of them means reasoning."""

_REJECT_CODES = ("unsupported_parameter", "unsupported_value")
_REJECT_TEXT = re.compile(r"unsupported (?:parameter|value): '(\w+)'", re.IGNORECASE)


def reasoning_mode(value: str, setting: str) -> str:
    """`false`, `true` or `auto` from the configured value; ConfigError otherwise."""
    mode = str(value).strip().lower()
    if mode not in MODES:
        raise ConfigError(f"{setting}={value!r}: expected one of {', '.join(MODES)}")
    return mode


def check_effort(value: str | None, setting: str) -> None:
    """ConfigError unless `value` is None or a `reasoning_effort` the OpenAI SDK lists."""
    if value is None:
        return
    from typing import get_args

    from openai.types.shared.reasoning_effort import ReasoningEffort

    known = [v for arg in get_args(ReasoningEffort) for v in get_args(arg)]
    if value not in known:
        raise ConfigError(f"{setting}={value!r}: expected null or one of {', '.join(known)}")


def reasoning_params(
    cfg: EndpointConfig, options: CallOptions | None, *, json_schema: bool
) -> RequestParams:
    """The parameters a reasoning-mode call sends (see the module docstring)."""
    params: RequestParams = {"max_completion_tokens": cfg.max_completion_tokens or cfg.max_tokens}
    if cfg.reasoning_effort is not None:
        params["reasoning_effort"] = cfg.reasoning_effort
    if options is not None and options.json_schema is not None and json_schema:
        params["response_format"] = options.json_schema.response_format()
    return params


def completion_cap(params: RequestParams) -> int:
    """The completion tokens a request may generate: whichever cap it sends."""
    return int(params.get("max_completion_tokens") or params["max_tokens"])


def rejected_parameter(exc: BaseException | None) -> str | None:
    """The parameter a reasoning model's HTTP 400 rejects (one of `DROPPED`), else None.

    Read from the error body's `param` when its `code` is `unsupported_parameter` or
    `unsupported_value` (OpenAI, Azure), else from the message's
    `Unsupported parameter: '<name>'` (servers that relay the message alone). Follows
    `__cause__`, so a ProviderError wrapping the SDK's error is recognised too.
    """
    import openai

    while exc is not None and not isinstance(exc, openai.BadRequestError):
        exc = exc.__cause__
    if exc is None:
        return None
    body = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error", body)
    error = error if isinstance(error, dict) else {}
    param = error.get("param")
    if error.get("code") in _REJECT_CODES and param in DROPPED:
        return str(param)
    match = _REJECT_TEXT.search(str(error.get("message") or exc.message))
    return match.group(1) if match and match.group(1) in DROPPED else None


class ReasoningSwitch:
    """Whether one endpoint is in reasoning mode; `auto` turns it on once, thread-safely."""

    def __init__(self, mode: str, where: str) -> None:
        self.mode = mode
        self._on = mode == "true"
        self._where = where
        self._lock = threading.Lock()

    @property
    def on(self) -> bool:
        """True when calls are sent with the reasoning parameters."""
        return self._on

    def detect(self, exc: BaseException, params: RequestParams) -> bool:
        """True when `exc` is a reasoning model's 400 to ordinary `params` on `auto`.

        The switch is then on; the first thread to see it logs the one line.
        """
        if self.mode != "auto" or "max_completion_tokens" in params:
            return False
        param = rejected_parameter(exc)
        if param is None:
            return False
        with self._lock:
            first, self._on = not self._on, True
        if first:
            log.warning(
                "%s: the model rejects %r (HTTP 400); it is a reasoning model: sending "
                "max_completion_tokens and no temperature/stop for the rest of the run "
                "(set reasoning: true to skip this request)",
                redact(self._where),
                param,
            )
        return True
