"""`dry_run=true`: what a run would send, counted before any provider call.

The run's own steps build the exact requests: the dataset is loaded and limited, each
arm ingests and retrieves offline, and the answer step renders the real answer and
judge prompts. Every chat role (answerer, extractor, judges) is replaced by a recorder
that counts the request and replies with a placeholder; a remote embedder is replaced by
the offline WordLlama embedder (its shipped dimension, zero-padded or cut to the
configured one, so a 1536-dimension model needs no weights of that size; retrieval then
runs offline, so contexts are close to, not identical with, the live run's). Nothing
reaches a server, and no API key is read: the recorders stand in for every remote
client.
Requests that depend on replies are counted for simulated replies: the answerer's reply
is the offline answerer's for the same messages (so judge prompts repeat where answers
would), and an LLM extractor reads the rule extractor's facts
(`arms.neuromorphic.dry_extract`), whose embeddings are then counted. Against a server
that replies as the offline pipeline does (the tests' stub) every role's count is the
real run's; against a model, judge and embedding counts follow its actual replies, so
they are estimates, so each role also gets a range (`dry_estimate.RoleEstimate`): its low
end judges identical answers once (per question, what one arm needs), its high end sends
every request, identical or not, and `budget.max_usd` is checked against the high end.
Start-up probes (`startup_probes`) are counted apart. Retries (timeouts, 429s) are not
foreseeable and not counted.

With `context_budgets`, every arm's answer and verdicts at each budget are made too (on
the cut context, bench/run/budgets.py) and counted in their roles, and per budget apart.
Per role: requests not already in the response cache, prompt tokens counted with the
run's tokenizer on every message's content, completion tokens bounded by `max_tokens`
(a reasoning endpoint's `max_completion_tokens`, hidden reasoning included; an `auto`
one's larger of the two; prompt-only for embeddings), cost = tokens / 1000 x the
endpoint's price, and the minimum wall time the rate limits allow,
`max(requests / requests_per_minute, tokens / tokens_per_minute)` minutes.
The arms' stores go to a temporary folder; no record or run.json is written.
A live arm (`http`, `mcp`: a running memory service) is never opened, so no health
check, namespace or token reaches its service: the in-process `neuromorphic` engine
(what the reference service runs) stands in for it, with rule extraction and offline
vectors, so its answer and judge requests are counted from that engine's contexts (an
estimate; the service's own extraction and embedding calls are its own), and the
estimate says so in a `note:` line.
The estimate is printed and written to `<out>/dry_run.json` (`to_json`: per role, and a
`total` whose `cost` is null, with the unpriced roles named, when any role with requests
has no price: a total that silently left them out would read as complete).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.config import EndpointConfig, JudgeConfig, RunConfig
from bench.providers.base import ChatProvider, Embedder, RunModels
from bench.providers.cache import ResponseCache
from bench.run.dry_estimate import DryRunEstimate
from bench.run.dry_recorders import DryChat, DryEmbedder, RecorderContext
from bench.tokens import TokenCounter

if TYPE_CHECKING:
    from bench.arm import Arm
    from bench.run.settings import ArmSpec


def _read_only_cache(cfg: RunConfig) -> ResponseCache | None:
    """The run's cache opened for reading, or None when it does not exist (none created)."""
    if cfg.provider.cache.mode in ("off", "write"):
        return None
    path = (
        Path(cfg.provider.cache.path).expanduser()
        if cfg.provider.cache.path
        else Path(cfg.out) / "cache" / "responses.sqlite"
    )
    return ResponseCache(path, "read") if path.is_file() else None


def estimate_run(cfg: RunConfig) -> DryRunEstimate:
    """Walk the run's questions with recording providers; return what would be sent."""
    from bench.answer.answer_prompt import load_answer_prompt
    from bench.answer.repeats import draw
    from bench.loaders import load_dataset
    from bench.run.conversation import answer_step
    from bench.run.ingest import ingest_arms
    from bench.run.pipeline import limit_dataset
    from bench.run.settings import arm_specs

    specs = arm_specs(cfg)
    prompt = load_answer_prompt(cfg.answer.prompt)
    dataset = limit_dataset(load_dataset(cfg.dataset), cfg)
    est, cache = DryRunEstimate(), _read_only_cache(cfg)
    with tempfile.TemporaryDirectory(prefix="bench-dry-run-") as tmp:
        providers = _DryProviders(cfg, Path(tmp), est, cache)
        try:
            step = answer_step(cfg, prompt, providers)
            arms = _open_arms(specs, cfg, providers, step.tokens, Path(tmp), est)
            try:
                for conversation in dataset.conversations:
                    failed = ingest_arms(arms, conversation)
                    for question in conversation.questions:
                        per_arm = []
                        for name, arm in arms.items():
                            if name not in failed:
                                before = est.judge_calls()
                                context = arm.retrieve(question)
                                result = step.answer(question, context, 0.0)
                                first = step.judge(question, result, rejudge=False)
                                draw(step, step.repeats, question, context, 0.0, first)
                                _budgets(est, step, question, context)
                                after = est.judge_calls()
                                per_arm.append({n: c - before.get(n, 0) for n, c in after.items()})
                        est.judged(per_arm)
            finally:
                for arm in arms.values():
                    arm.close()
        finally:
            providers.close()
            if cache is not None:
                cache.close()
    est.probes = startup_probes(cfg)
    return est


def _open_arms(
    specs: list[ArmSpec],
    cfg: RunConfig,
    providers: RunModels,
    tokens: TokenCounter,
    tmp: Path,
    est: DryRunEstimate,
) -> dict[str, Arm]:
    """The run's arms, each live one stood in for by the in-process engine (never opened)."""
    from bench.arm.registry import arm_kind
    from bench.names import load_symbol
    from bench.providers.offline_embed import WordLlamaEmbedder
    from bench.run.arm_setup import open_arms
    from bench.run.settings import ArmSpec

    live = [s for s in specs if arm_kind(s.kind, f"arm_options.{s.name}.kind").live]
    arms = open_arms([s for s in specs if s not in live], cfg, providers, tokens, tmp)
    if live:
        offline = _OfflineModels(WordLlamaEmbedder())
        engine = load_symbol(arm_kind("neuromorphic", "dry run").config)
        stand_ins = [ArmSpec(s.name, "neuromorphic", engine()) for s in live]
        arms |= open_arms(stand_ins, cfg, offline, tokens, tmp / "live")
    est.notes += [
        f"arm {s.name} ({s.kind}) is a live memory service, not contacted: its answer and "
        "judge requests are estimated from the in-process neuromorphic engine's contexts"
        for s in live
    ]
    return {s.name: arms[s.name] for s in specs}


@dataclass(frozen=True)
class _OfflineModels:
    """The models of the in-process stand-in for a live arm: the offline embedder only."""

    embedder: Embedder
    extractor: None = None


def _budgets(est: DryRunEstimate, step: Any, question: Any, context: Any) -> None:
    """Each context budget's answer and verdicts, counted per budget (`est.per_budget`)."""
    from bench.run.budgets import answer_budgets

    for budget in step.budgets:
        before = {name: r.requests for name, r in est.roles.items()}
        answer_budgets(replace(step, budgets=(budget,)), question, context, 0.0)
        est.add_budget(budget, before)


def startup_probes(cfg: RunConfig) -> tuple[int, int]:
    """(fewest, most) GET requests a run sends before its first model call.

    One `GET <base_url>/models` per endpoint, key and model that has a key
    (`bench.providers.probe.check_key`), and the answerer's context-window probe
    (`bench.providers.context_window`: llama.cpp `/props`, then vLLM `/models`) unless
    `provider.context_tokens` is set. The TCP connects send no request.
    """
    from bench.providers.probe import key_checks

    p = cfg.provider
    keyed = len(key_checks(cfg))
    window = p.answerer.kind == "openai" and p.context_tokens is None and cfg.phase != "predict"
    return keyed + int(window), keyed + 2 * int(window)


class _DryProviders:
    """The run's ProviderSet with every remote role swapped for a recorder."""

    def __init__(
        self, cfg: RunConfig, tmp: Path, est: DryRunEstimate, cache: ResponseCache | None
    ) -> None:
        from bench.providers.factory import ProviderSet

        p = cfg.provider
        keyless = {
            role: replace(getattr(p, role), api_key_env=None)
            for role in ("answerer", "extractor", "embedder")
        }
        off = replace(p, cache=replace(p.cache, mode="off"), **keyless)  # no key is read
        self._real = ProviderSet(off, tmp)
        self._est, self._cfg = est, cfg
        self._ctx = RecorderContext(TokenCounter(), cache)
        self.answerer = self._wrap(self._real.answerer, "answerer", cfg.provider.answerer)
        self.extractor = (
            None
            if self._real.extractor is None
            else self._wrap(self._real.extractor, "extractor", cfg.provider.extractor)
        )
        self.embedder: Embedder = (
            self._real.embedder
            if cfg.provider.embedder.kind != "openai"
            else DryEmbedder(self._real.embedder, cfg.provider.embedder, est, self._ctx)
        )

    def judge(self, judge_cfg: JudgeConfig) -> ChatProvider:
        """The recorder for one LLM judge."""
        keyless = replace(judge_cfg, endpoint=replace(judge_cfg.endpoint, api_key_env=None))
        real = self._real.judge(keyless)
        return self._wrap(real, f"judge:{judge_cfg.judge_id}", judge_cfg.endpoint)

    def _wrap(self, real: Any, role: str, endpoint: EndpointConfig) -> ChatProvider:
        if endpoint.kind != "openai":
            return real  # type: ignore[no-any-return]  # offline: no request to count
        return DryChat(real, role, endpoint, self._est, self._ctx)

    def close(self) -> None:
        """Close the (never used) clients."""
        self._real.close()
