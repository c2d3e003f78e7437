"""Build every configured judge: armbench's own or an official one, expanded into its runs.

`build_judges` is the one place a run turns `cfg.judges` into judges (the pipeline, the
fan-out parent and the calibration all call it); each is a `bench.judge.protocol.Judge`
(one run of one configured judge) and `rebuild(judge.spec, chat)` makes it again.
`judge_meta` turns them back into one `JudgeMeta` per configured judge for run.json and
the summary header; `key_meta` does the same from `resume.JudgeKey`s and the
configuration, where no judge is built.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Protocol
from urllib.parse import urlsplit, urlunsplit

from bench.config import JudgeConfig
from bench.errors import ConfigError
from bench.judge.judges import build_judge
from bench.judge.official.judges import OFFICIAL_SPECS, build_official_judge
from bench.judge.official.registry import judge_file
from bench.judge.protocol import Judge, JudgeIdentity, JudgeSpec
from bench.providers.base import ChatProvider
from bench.providers.secrets import redact
from bench.runmeta import JudgeMeta
from bench.scoring.judge_runs import check_runs, run_ids, split_run_id


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


def build_one(cfg: JudgeConfig, chat: ChatProvider, attempts: int) -> list[Judge]:
    """Judge `cfg` as its runs: one judge per run id, each asking under its own cache key."""
    problem = check_runs(cfg.judge_id, cfg.runs)
    if problem:
        raise ConfigError(problem)
    first = rebuild(JudgeSpec(cfg, attempts), chat)
    ids = run_ids(cfg.judge_id, cfg.runs)
    return [first.with_run(jid, k) for k, jid in enumerate(ids, start=1)]


def rebuild(spec: JudgeSpec, chat: ChatProvider) -> Judge:
    """The judge `spec` describes (its run included): an official one or armbench's own."""
    endpoint = public_endpoint(spec.config.endpoint.base_url)
    judge: Judge
    if spec.config.kind in OFFICIAL_SPECS:
        judge = build_official_judge(replace(spec, judge_id="", run=1), chat, endpoint)
    else:
        judge = build_judge(spec.config, chat, spec.attempts, endpoint)
    if spec.judge_id or spec.run != 1:
        judge = judge.with_run(spec.judge_id or spec.config.judge_id, spec.run)
    return judge


def build_judges(
    cfgs: Iterable[JudgeConfig], providers: ChatSource, attempts: int
) -> tuple[Judge, ...]:
    """Every configured judge's runs, in configuration order."""
    return tuple(j for cfg in cfgs for j in build_one(cfg, providers.judge(cfg), attempts))


def judge_meta(judges: Sequence[Judge]) -> list[JudgeMeta]:
    """One `JudgeMeta` per configured judge (its runs counted), in order, from the judges."""
    metas: dict[str, JudgeMeta] = {}
    for j in judges:
        base = j.meta.judge_id or split_run_id(j.judge_id)[0]
        runs = (metas[base].runs or 0) + 1 if base in metas else 1
        metas[base] = replace(j.meta, runs=runs)
    return list(metas.values())


def key_meta(keys: Sequence[JudgeIdentity], cfgs: Sequence[JudgeConfig]) -> list[JudgeMeta]:
    """One `JudgeMeta` per configured judge from keys (`resume.JudgeKey`: id, model, hash).

    The rest (kind, endpoint, prompt source, official model) is read from the judge's
    configuration in `cfgs`, as the built judge would say it.
    """
    by_id = {c.judge_id: c for c in cfgs}
    metas: dict[str, JudgeMeta] = {}
    for key in keys:
        base, _ = split_run_id(key.judge_id)
        runs = (metas[base].runs or 0) + 1 if base in metas else 1
        cfg = by_id.get(base)
        spec = OFFICIAL_SPECS.get(cfg.kind) if cfg else None
        official = spec.official_model if spec else None
        metas[base] = JudgeMeta(
            judge_id=base,
            model=key.model,
            prompt_hash=key.prompt_hash,
            kind=cfg.kind if cfg else None,
            endpoint=public_endpoint(cfg.endpoint.base_url) or None if cfg else None,
            prompt_source=(judge_file(spec.file).url if spec else cfg.prompt) if cfg else None,
            official_model=official,
            model_differs=None if official is None else official != key.model,
            runs=runs,
        )
    return list(metas.values())
