"""Build every configured judge: armbench's own or an official one, expanded into its runs.

`build_judges` is the one place a run turns `cfg.judges` into judge objects (the
pipeline, the fan-out parent and the calibration all call it). Each object has
`judge_id` (a run's `<id>#<k>`), `model`, `prompt_hash`, `prompt_source`, `endpoint`
and `judge(question, answer, repeat=0) -> Judgement`. `judge_meta` turns them back into
one `JudgeMeta` per configured judge for run.json and the summary header.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

from bench.config import JudgeConfig
from bench.errors import ConfigError
from bench.judge.judges import build_judge
from bench.judge.official.judges import OFFICIAL_SPECS, build_official_judge
from bench.judge.official.registry import judge_file
from bench.providers.base import ChatProvider
from bench.providers.secrets import redact
from bench.runmeta import JudgeMeta
from bench.scoring.judge_runs import check_runs, run_ids, run_version, split_run_id


class ChatSource(Protocol):
    """What builds a judge's chat provider (`ProviderSet.judge`)."""

    def judge(self, cfg: JudgeConfig) -> ChatProvider:
        """The chat provider for judge `cfg`."""
        ...


def public_endpoint(base_url: str | None) -> str:
    """`base_url` without user info, query or fragment, secrets redacted ('' when unset)."""
    if not base_url:
        return ""
    parts = urlsplit(base_url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return redact(urlunsplit((parts.scheme, netloc, parts.path, "", "")))


def build_one(cfg: JudgeConfig, chat: ChatProvider, attempts: int) -> list[Any]:
    """Judge `cfg` as its runs: one object per run id, each asking under its own cache key."""
    problem = check_runs(cfg.judge_id, cfg.runs)
    if problem:
        raise ConfigError(problem)
    endpoint = public_endpoint(cfg.endpoint.base_url)
    if cfg.kind in OFFICIAL_SPECS:
        official = build_official_judge(cfg, chat, endpoint)
        ids = run_ids(cfg.judge_id, cfg.runs)
        return [official.with_run(jid, k) for k, jid in enumerate(ids, start=1)]
    judge = build_judge(cfg, chat, attempts)
    judge.endpoint = endpoint
    built = []
    for k, jid in enumerate(run_ids(cfg.judge_id, cfg.runs), start=1):
        one = copy.copy(judge)
        one.judge_id, one.version = jid, run_version(judge.version, k)
        built.append(one)
    return built


def build_judges(
    cfgs: Iterable[JudgeConfig], providers: ChatSource, attempts: int
) -> tuple[Any, ...]:
    """Every configured judge's runs, in configuration order."""
    return tuple(j for cfg in cfgs for j in build_one(cfg, providers.judge(cfg), attempts))


def _from_config(cfg: JudgeConfig | None) -> dict[str, Any]:
    """What a judge's configuration says of it (kind, endpoint, prompt source, official model)."""
    if cfg is None:
        return {}
    spec = OFFICIAL_SPECS.get(cfg.kind)
    return {
        "kind": cfg.kind,
        "endpoint": public_endpoint(cfg.endpoint.base_url) or None,
        "prompt_source": judge_file(spec.file).url if spec else cfg.prompt,
        "official_model": spec.official_model if spec else None,
    }


def judge_meta(judges: Sequence[Any], cfgs: Sequence[JudgeConfig] = ()) -> list[JudgeMeta]:
    """One `JudgeMeta` per configured judge (its runs counted), in order.

    Takes built judges or `resume.JudgeKey`s (which carry only id, model and hash: the
    rest is read from the judge's configuration in `cfgs`).
    """
    by_id = {c.judge_id: c for c in cfgs}
    metas: dict[str, JudgeMeta] = {}
    for j in judges:
        base, _ = split_run_id(j.judge_id)
        runs = (metas[base].runs or 0) + 1 if base in metas else 1
        known = _from_config(by_id.get(base))
        for name in ("kind", "endpoint", "prompt_source", "official_model"):
            known[name] = getattr(j, name, None) or known.get(name)
        official = known["official_model"]
        metas[base] = JudgeMeta(
            judge_id=base,
            model=j.model,
            prompt_hash=j.prompt_hash,
            model_differs=None if official is None else official != j.model,
            runs=runs,
            **known,
        )
    return list(metas.values())
