"""Arms from other packages: the `armbench.arms` entry-point group.

A package adds an arm kind without editing armbench by declaring, in its
`pyproject.toml`,

    [project.entry-points."armbench.arms"]
    keyword = "armbench_keyword:KeywordArm"

(kind -> `module:Class` of the arm). The class names its config dataclass in a
`config_class` attribute, and the package ships the default options as
`<top-level package>/conf/arm/<kind>.yaml`. Each plug-in then composes like a built-in
arm: its conf folder is added to Hydra's search path and `arm_options.<kind>` gets its
YAML (`plugin_overrides`), so `arms=[rag,keyword]` and `arm_options.keyword.top_k=3`
work as for `rag`. A built-in kind always wins: a plug-in reusing one is an error.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from bench.errors import ConfigError

GROUP = "armbench.arms"
"""The entry-point group plug-in arms are declared in."""


@dataclass(frozen=True)
class PluginArm:
    """One arm kind declared by an installed distribution."""

    kind: str
    """The arm kind (the entry point's name)."""
    implementation: str
    """`module:Class` of the arm (the entry point's value)."""
    distribution: str
    """The distribution that declares it (for messages)."""

    @property
    def label(self) -> str:
        """`plug-in arm <kind> (<distribution>)`: how messages name it."""
        return f"plug-in arm {self.kind} ({self.distribution})"

    @property
    def config(self) -> str:
        """`module:Class.config_class`: the arm's config dataclass, loaded lazily."""
        return f"{self.implementation}.config_class"

    def conf_dir(self) -> Path:
        """The plug-in's conf folder (`<top package>/conf`), checked to hold its YAML.

        Found without importing the package (`importlib.util.find_spec` of a top-level
        name runs none of its code), so a plug-in that fails at import does so only where
        it is used, under `bench.arm.guard`.
        """
        package = self.implementation.partition(":")[0].split(".")[0]
        try:
            spec = importlib.util.find_spec(package)
        except (ImportError, ValueError) as exc:
            spec, why = None, str(exc)
        else:
            why = "not installed"
        places = list(spec.submodule_search_locations or []) if spec is not None else []
        if not places:
            raise ConfigError(
                f"{self.label}: cannot find package {package} ({why}); reinstall the plug-in"
            )
        folder = Path(places[0]) / "conf"
        if not (folder / "arm" / f"{self.kind}.yaml").is_file():
            raise ConfigError(
                f"{self.label}: no conf/arm/{self.kind}.yaml in package {package}; ship the "
                "arm's default options there"
            )
        return folder


def plugin_arms(builtin: set[str]) -> dict[str, PluginArm]:
    """The installed plug-in arms by kind (sorted); a kind in `builtin` is an error."""
    found: dict[str, PluginArm] = {}
    for ep in sorted(metadata.entry_points(group=GROUP), key=lambda e: (e.name, e.value)):
        dist = ep.dist.name if ep.dist is not None else "unknown distribution"
        if ep.name in builtin or ep.name in found:
            raise ConfigError(
                f"plug-in arm {ep.name} ({dist}): the kind is already taken"
                f"{' by a built-in arm' if ep.name in builtin else ''}; rename its entry "
                f"point in the {GROUP} group"
            )
        found[ep.name] = PluginArm(ep.name, ep.value, dist)
    return found


def plugin_overrides(plugins: dict[str, PluginArm]) -> list[str]:
    """Hydra overrides composing every plug-in's default options into `arm_options`."""
    if not plugins:
        return []
    paths = ",".join(f"file://{p.conf_dir()}" for p in plugins.values())
    return [f"hydra.searchpath=[{paths}]", *(f"+arm@arm_options.{k}={k}" for k in plugins)]
