"""The one explicit, lazy name table of arm implementations, plus installed plug-ins.

Importing this module imports no arm: each entry names `module:attribute` strings
that load on first use. Kinds not listed here are looked up among the plug-ins of the
`armbench.arms` entry-point group (bench/arm/plugins.py). An unknown name fails with
"did you mean".
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.errors import ConfigError
from bench.names import unknown


@dataclass(frozen=True)
class ArmKind:
    """Where an arm implementation and its config dataclass live."""

    implementation: str
    """`module:Class` of the arm implementation, imported lazily."""
    config: str
    """`module:Class` of the arm's config dataclass."""
    reads_context_budget: bool = True
    """True when the arm reads `ArmServices.max_context_tokens` while retrieving (raw cuts
    its transcript to it), so `answer.max_context_tokens` is part of its predict identity
    (`bench.run.phases.predict_identity`); a plug-in is assumed to read it."""
    live: bool = False
    """True for an arm that calls a running memory service (`http`, `mcp`): a dry run
    never opens it (bench.run.dry_run stands the in-process engine in for it)."""


ARM_KINDS: dict[str, ArmKind] = {
    "raw": ArmKind("arms.raw:RawArm", "arms.raw:RawConfig"),
    "rag": ArmKind("arms.rag:RagArm", "arms.rag:RagConfig", reads_context_budget=False),
    "neuromorphic": ArmKind(
        "arms.neuromorphic.arm:NeuromorphicArm",
        "arms.neuromorphic.config:NeuromorphicConfig",
        reads_context_budget=False,
    ),
    "http": ArmKind(
        "arms.http:HttpArm", "arms.http:HttpConfig", reads_context_budget=False, live=True
    ),
    "mcp": ArmKind("arms.mcp:McpArm", "arms.mcp:McpConfig", reads_context_budget=False, live=True),
}


NOT_BUILT: dict[str, str] = {
    "cognee": "Cognee downloads tiktoken's cl100k_base encoding at start-up, so it cannot "
    "run offline (docs/libraries.md); benchmark Graphiti (arms=[graphiti]) or Mem0 "
    "(arms=[mem0]) instead",
}
"""Memory libraries tried and not built as arms, and why: named in the unknown-arm error."""


def not_built(name: str, setting: str) -> None:
    """Refuse an arm name that is a library tried and not built, with the reason, in one line."""
    if name in NOT_BUILT:
        raise ConfigError(f"{setting}: {name} is not an arm: {NOT_BUILT[name]}")


def arm_kind(kind: str, setting: str) -> ArmKind:
    """The implementation entry for an arm kind (built in, else a plug-in), or did-you-mean."""
    if kind in ARM_KINDS:
        return ARM_KINDS[kind]
    from bench.arm.plugins import plugin_arms

    plugins = plugin_arms(set(ARM_KINDS))
    if kind not in plugins:
        not_built(kind, setting)
        raise unknown("arm kind", kind, [*ARM_KINDS, *plugins], setting)
    return ArmKind(plugins[kind].implementation, plugins[kind].config)
