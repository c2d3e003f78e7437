"""Does the answer prompt fit the server's context? Checked once up front, and per prompt.

The largest prompt a run can send is

    answer.max_context_tokens + overhead + answer cap

where `overhead` is the answer prompt without its context plus `QUESTION_RESERVE_TOKENS`
for the question, and the answer cap is the lower of `answer.max_tokens` and
`provider.answerer.max_tokens`. It must fit `FIT_SHARE` of the tokens one request may
use (our tokenizer is not the server's: the rest is spare). That window is
`provider.context_tokens` when set, else what the server reports (llama.cpp `/props`,
vLLM `/v1/models`, see bench.providers.context_window); with `provider.context_shared`
(slots sharing one KV cache) it is divided by min(concurrency, slots), the requests the
server holds at once. A prompt that cannot fit refuses the run with the numbers (exit 2),
or, with `answer.truncate_to_fit=true`, lowers the context budget to fit (logged, written
to run.json's config; every answer it cut says so in its record).
"""

from __future__ import annotations

import logging
from dataclasses import replace

from bench.answer.answer_prompt import AnswerPrompt
from bench.config import RunConfig
from bench.errors import ConfigError
from bench.tokens import TokenCounter

log = logging.getLogger("bench.run")
FIT_SHARE = 0.9
"""Share of the server's window a prompt may fill (the rest covers tokenizer differences)."""
QUESTION_RESERVE_TOKENS = 64
"""Tokens kept for the question text in the up-front check."""


def answer_cap(cfg: RunConfig) -> int:
    """The completion cap sent with every answer."""
    return max(1, min(cfg.answer.max_tokens, cfg.provider.answerer.max_tokens))


def usable(window: int) -> int:
    """Tokens a prompt plus its completion may use of a `window`-token context."""
    return int(window * FIT_SHARE)


def fit_context(cfg: RunConfig, prompt: AnswerPrompt, tokens: TokenCounter) -> RunConfig:
    """`cfg` with `provider.context_tokens` set to the server's window.

    The budget is lowered under `truncate_to_fit`; `cfg` is unchanged when no answer is
    sent or the window is unknown. Raises ConfigError (one line with the numbers) when
    the budget cannot fit.
    """
    answerer = cfg.provider.answerer
    if answerer.kind != "openai" or cfg.phase == "predict" or cfg.dry_run:
        return cfg
    window, source = _window(cfg)
    if window is None:
        return cfg
    fitted = replace(cfg, provider=replace(cfg.provider, context_tokens=window))
    overhead = tokens.count(prompt.template.replace("{context}", "")) + QUESTION_RESERVE_TOKENS
    cap, budget, room = answer_cap(cfg), cfg.answer.max_context_tokens, usable(window)
    log.info("server context: %d tokens per request (%s)", window, source)
    if budget + overhead + cap <= room:
        return fitted
    fits = room - overhead - cap
    numbers = (
        f"the prompt can reach {budget} (context) + {overhead} (prompt and question) + {cap} "
        f"(answer) = {budget + overhead + cap} tokens, over the {room} usable of the "
        f"server's {window}-token context per request ({source}; {FIT_SHARE:.0%} kept)"
    )
    if fits <= 0:
        raise ConfigError(
            f"answer.max_context_tokens={budget}: {numbers}; start the server "
            "with a larger context per slot (docs/providers.md)"
        )
    if not cfg.answer.truncate_to_fit:
        raise ConfigError(
            f"answer.max_context_tokens={budget}: {numbers}: set answer.max_context_tokens="
            f"{fits} (or lower), or answer.truncate_to_fit=true"
        )
    log.warning("answer.truncate_to_fit: context budget lowered from %d to %d tokens", budget, fits)
    return replace(fitted, answer=replace(cfg.answer, max_context_tokens=fits))


def _window(cfg: RunConfig) -> tuple[int | None, str]:
    """Tokens one request may use, and where the number came from."""
    provider = cfg.provider
    if provider.context_tokens is not None:
        if provider.context_tokens <= 0:
            raise ConfigError(f"provider.context_tokens={provider.context_tokens}: must be > 0")
        return provider.context_tokens, "provider.context_tokens"
    from bench.providers.context_window import probe
    from bench.providers.secrets import read_api_key

    answerer = provider.answerer
    key = read_api_key(answerer.api_key_env, "provider.answerer.api_key_env")
    server = probe(answerer.base_url or "", answerer.model, key or None)
    if server is None:
        return None, ""
    if provider.context_shared and server.slots:
        held = max(1, min(answerer.concurrency, server.slots))
        return server.tokens // held, f"{server.source}: {server.tokens} shared by {held} requests"
    slots = f", {server.slots} slots" if server.slots else ""
    return server.tokens, f"{server.source}{slots}"
