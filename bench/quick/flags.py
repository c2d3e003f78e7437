"""Flags → the Hydra overrides of `python -m bench.run` (the quick path's one translation).

    armbench run locomo --answer-model M --answer-base-url U --judge mem0_locomo
        --judge-model J --arms raw,rag

becomes `dataset=locomo provider=... provider.answerer.model=M ... judge=mem0_locomo
judges.0.endpoint.model=J arms=[raw,rag]`. The provider is `openai` for OpenAI's own URL
(or none given), else `llamacpp` (any OpenAI-compatible server: no key, embeddings on the
offline WordLlama default); `--provider` chooses another. `.env` values
(`ANSWER_MODEL`, `ANSWER_BASE_URL`, `EVAL_MODEL`, `EVAL_BASE_URL`) fill flags not given.
"""

from __future__ import annotations

import argparse
from urllib.parse import urlsplit

from bench.cli_errors import OneLineParser
from bench.errors import ConfigError
from bench.names import unknown
from bench.run.settings import group_options

ENV_FLAGS = {
    "ANSWER_MODEL": "answer_model",
    "ANSWER_BASE_URL": "answer_base_url",
    "EVAL_MODEL": "judge_model",
    "EVAL_BASE_URL": "judge_base_url",
}
"""`.env` names → the flag each one fills when the flag is not given."""


def parser(prog: str = "python -m bench.quick") -> OneLineParser:
    """`armbench run DATASET [flags] [-- hydra overrides]` (`prog`: how it was invoked)."""
    p = OneLineParser(prog=prog, description="Run a benchmark with flags (bench.run).")
    sub = p.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    run = sub.add_parser("run", help="run a benchmark; prints the bench.run command first")
    run.add_argument("dataset", help="locomo, longmemeval, beam, locomo_plus, smoke, ...")
    add = run.add_argument
    add("--arms", default="raw,rag", help="comma-separated arms (default raw,rag)")
    add("--answer-model", help="answerer model (env ANSWER_MODEL)")
    add("--answer-base-url", help="answerer OpenAI-compatible URL (env ANSWER_BASE_URL)")
    add("--answer-key-env", help="variable holding the answerer's key; 'none': no key")
    add("--provider", help="provider config (default: openai for api.openai.com, else llamacpp)")
    add("--judge", help="judge config: llm, mem0_locomo, longmemeval_official, ...")
    add("--judge-model", help="judge model (env EVAL_MODEL); alone it means --judge llm")
    add("--judge-base-url", help="judge OpenAI-compatible URL (env EVAL_BASE_URL)")
    add("--judge-key-env", help="variable holding the judge's key; 'none': no key")
    add("--out", help="run directory (default results/<dataset>-<provider>)")
    add("--limit-conversations", type=int, help="first N conversations")
    add("--limit-questions", type=int, help="first N questions per conversation")
    add("--per-category", type=int, help="seeded stratified sample: N per category")
    add("--fraction", type=float, help="seeded stratified sample: fraction per category")
    add("--seed", type=int, help="the sample's seed (default 0)")
    add("--dry-run", action="store_true", help="estimate requests and cost; call nothing")
    add("--print-only", action="store_true", help="print the bench.run command; run nothing")
    add("--env-file", default=".env", help="NAME=value file (default ./.env, when present)")
    add("overrides", nargs="*", help="more Hydra overrides, after --")
    return p


def choice(group: str, name: str, flag: str) -> str:
    """`name`, when conf/<group>/<name>.yaml exists; ConfigError with a suggestion if not."""
    if name not in group_options(group):
        raise unknown(group, name, group_options(group), flag)
    return name


def is_openai(url: str | None) -> bool:
    """Whether `url` is OpenAI's own API (None: the default, which is)."""
    host = urlsplit(url or "https://api.openai.com/v1").hostname or ""
    return host == "openai.com" or host.endswith(".openai.com")


def provider_of(args: argparse.Namespace) -> str:
    """`--provider`, else openai for OpenAI's URL (or none), else llamacpp."""
    if args.provider:
        return choice("provider", args.provider, f"--provider {args.provider}")
    return "openai" if is_openai(args.answer_base_url) else "llamacpp"


def key_env(value: str | None) -> str | None:
    """A `--*-key-env` value as an override value: `none` is null; a name is kept."""
    if value is None:
        return None
    return "null" if value.lower() in ("none", "null", "") else value


def answer_overrides(args: argparse.Namespace) -> list[str]:
    """The provider and answerer settings."""
    out = [f"provider={provider_of(args)}"]
    if args.answer_model:
        out.append(f"provider.answerer.model={args.answer_model}")
    if args.answer_base_url:
        out.append(f"provider.answerer.base_url={args.answer_base_url}")
    if (key := key_env(args.answer_key_env)) is not None:
        out.append(f"provider.answerer.api_key_env={key}")
    return out


def judge_overrides(args: argparse.Namespace) -> list[str]:
    """The judge settings (`--judge-model` alone means the generic `llm` judge)."""
    judge = args.judge or ("llm" if args.judge_model or args.judge_base_url else None)
    if judge is None:
        return []
    out = [f"judge={choice('judge', judge, f'--judge {judge}')}"]
    if args.judge_base_url:
        out += [
            "judges.0.endpoint.kind=openai",
            f"judges.0.endpoint.base_url={args.judge_base_url}",
        ]
    if args.judge_model:
        out.append(f"judges.0.endpoint.model={args.judge_model}")
    key = key_env(args.judge_key_env)
    if key is None and args.judge_base_url:  # its own server: not the answerer's key
        key = "OPENAI_API_KEY" if is_openai(args.judge_base_url) else "null"
    if key is not None:
        out.append(f"judges.0.endpoint.api_key_env={key}")
    return out


def limit_overrides(args: argparse.Namespace) -> list[str]:
    """`limit.*` and the sample's settings, for the flags given."""
    pairs = [
        ("limit.conversations", args.limit_conversations),
        ("limit.questions", args.limit_questions),
        ("limit.per_category", args.per_category),
        ("limit.fraction", args.fraction),
        ("limit.seed", args.seed),
    ]
    return [f"{key}={value}" for key, value in pairs if value is not None]


def to_overrides(args: argparse.Namespace) -> list[str]:
    """Every Hydra override the flags stand for, in a fixed order, user overrides last."""
    arms = [a.strip() for a in args.arms.split(",") if a.strip()]
    if not arms:
        raise ConfigError(f"--arms {args.arms!r}: no arm named: e.g. --arms raw,rag")
    out = [f"dataset={choice('dataset', args.dataset, f'run {args.dataset}')}"]
    out += [*answer_overrides(args), *judge_overrides(args), f"arms=[{','.join(arms)}]"]
    out += limit_overrides(args)
    out += [f"out={args.out}"] if args.out else []
    out += ["dry_run=true"] if args.dry_run else []
    return [*out, *args.overrides]
