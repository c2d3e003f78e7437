"""Open the requested arms with their services (stores, embedder, extractor, tokens)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from bench.arm import Arm, ArmServices, IngestProgress
from bench.arm.guard import open_arm
from bench.config import RunConfig
from bench.hashing import stable_hash
from bench.paths import contained, safe_name
from bench.providers.base import ArmModels
from bench.run.settings import ArmSpec
from bench.tokens import TokenCounter


def open_arms(
    specs: list[ArmSpec],
    cfg: RunConfig,
    providers: ArmModels,
    tokens: TokenCounter,
    run_dir: Path,
    store_root: Path | None = None,
    shared_stores: Path | None = None,
    progress: IngestProgress | None = None,
) -> dict[str, Arm]:
    """Construct every requested arm with its services (lazily importing each kind).

    A plug-in arm is imported, constructed and called under deadlines and a circuit
    breaker (`bench.arm.guard`, limits `cfg.plugins`).

    Stores go under `<store_root>/stores/<arm>` (`store_root` defaults to `run_dir`;
    run-wide state stays in `run_dir`), or with `shared_stores` to
    `<shared_stores>/<arm>-<hash of the arm's fingerprint>`: the fingerprint leaves
    retrieval knobs out, so sweep jobs differing only in those share one store, and
    jobs differing in what ingestion builds never overwrite each other's. `progress`
    hears each arm's ingestion progress (`ArmServices.progress`).
    """
    arms: dict[str, Arm] = {}
    for spec in specs:
        services = ArmServices(
            embedder=providers.embedder,
            tokens=tokens,
            store_dir=(store_root or run_dir) / "stores" / safe_name(spec.name),
            run_dir=run_dir,
            extractor=providers.extractor,
            max_context_tokens=cfg.answer.max_context_tokens,
            extract_mode=cfg.provider.extractor.extract_mode,
            llm_proxy=getattr(providers, "proxy_url", None),
            progress=progress,
        )
        setting = f"arm_options.{spec.name}.kind"
        arm = open_arm(spec.kind, setting, cfg.plugins, spec.name, spec.options, services)
        if shared_stores is not None:
            key = f"{spec.name}-{stable_hash(arm.fingerprint())[:16]}"
            store_dir = contained(shared_stores / safe_name(key), shared_stores)
            shared = replace(services, store_dir=store_dir)
            arm = open_arm(spec.kind, setting, cfg.plugins, spec.name, spec.options, shared)
        arms[spec.name] = arm
    return arms
