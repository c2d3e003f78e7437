"""Arms as plug-ins: the `armbench.arms` entry-point group (bench/arm/plugins.py).

A tiny plug-in project is written to a temporary folder and installed there offline
(tests/support/plugin_install.py: its package and the `.dist-info` pip would write); the
registry, the Hydra overrides and the CLI then find it with no edit of armbench.
tests/arm/test_arm_recipe.py runs the README's plug-in paired with `rag` on the smoke set.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.arm.plugins import plugin_arms, plugin_overrides
from bench.arm.registry import ARM_KINDS, arm_kind
from bench.errors import ConfigError
from bench.names import load_symbol
from tests.support.e2e_support import ROOT, last_line, load_records, run_cli
from tests.support.plugin_install import install_plugin

ARM = '''"""echo: the last turns of the conversation."""

from dataclasses import dataclass
from typing import Any

from bench.types import Context, ContextItem, Conversation, Question


@dataclass
class EchoConfig:
    """Options of the echo arm."""

    kind: str = "echo"
    """Always `echo`."""
    last: int = 3
    """Turns kept."""


class EchoArm:
    """The last `last` turns, whatever the question."""

    config_class = EchoConfig

    def __init__(self, name: str, config: EchoConfig, services: Any) -> None:
        self.name, self.config, self.turns = name, config, []

    def fingerprint(self) -> dict[str, Any]:
        return {"kind": "echo", "config": vars(self.config)}

    def ingest(self, conversation: Conversation) -> dict[str, Any]:
        self.turns = conversation.turns()
        return {"stored": len(self.turns)}

    def retrieve(self, question: Question) -> Context:
        kept = self.turns[-self.config.last :]
        items = tuple(ContextItem(t.render(), 0.0, (t.dia_id,)) for t in kept)
        return Context(text="\\n".join(i.text for i in items), items=items)

    def close(self) -> None:
        pass
'''


def write_plugin(where: Path, kind: str = "echo", yaml: bool = True, source: str = ARM) -> Path:
    """An installed plug-in declaring `kind` (its module: `source`); the folder for sys.path."""
    project = where / "project"
    (project / "armbench_echo" / "conf" / "arm").mkdir(parents=True)
    (project / "armbench_echo" / "__init__.py").write_text(source, encoding="utf-8")
    if yaml:
        (project / "armbench_echo" / "conf" / "arm" / f"{kind}.yaml").write_text(
            "kind: echo\nlast: 3\n", encoding="utf-8"
        )
    (project / "pyproject.toml").write_text(
        '[project]\nname = "armbench-echo"\nversion = "0.1"\n\n'
        f'[project.entry-points."armbench.arms"]\n{kind} = "armbench_echo:EchoArm"\n',
        encoding="utf-8",
    )
    install_plugin(project, where / "site")
    return where / "site"


@pytest.fixture
def on_path(tmp_path: Path) -> Iterator[Path]:
    """The echo plug-in installed and on sys.path for this test only."""
    site = write_plugin(tmp_path)
    sys.path.insert(0, str(site))
    try:
        yield site
    finally:
        sys.path.remove(str(site))
        sys.modules.pop("armbench_echo", None)


def test_an_installed_plugin_is_an_arm_kind(on_path: Path) -> None:
    found = plugin_arms(set(ARM_KINDS))
    found = {k: v for k, v in found.items() if v.distribution != "armbench"}  # its adapters
    assert list(found) == ["echo"] and found["echo"].distribution == "armbench-echo"
    kind = arm_kind("echo", "arm_options.echo.kind")
    assert load_symbol(kind.implementation).__name__ == "EchoArm"
    assert load_symbol(kind.config).__name__ == "EchoConfig"
    conf = on_path / "armbench_echo" / "conf"
    assert plugin_overrides(found) == [
        f"hydra.searchpath=[file://{conf}]",
        "+arm@arm_options.echo=echo",
    ]


def test_an_unknown_kind_names_the_plugins_too(on_path: Path) -> None:
    with pytest.raises(ConfigError, match="did you mean 'echo'"):
        arm_kind("ecko", "arm_options.x.kind")


def test_a_plugin_taking_a_builtin_kind_is_refused(tmp_path: Path) -> None:
    site = write_plugin(tmp_path, kind="rag")
    sys.path.insert(0, str(site))
    try:
        with pytest.raises(ConfigError, match="plug-in arm rag .* already taken by a built-in"):
            plugin_arms(set(ARM_KINDS))
    finally:
        sys.path.remove(str(site))


def _env(site: Path) -> dict[str, str]:
    return {"PYTHONPATH": os.pathsep.join([str(ROOT), str(site)])}


def test_a_plugin_without_its_yaml_is_one_line_and_exit_2(tmp_path: Path) -> None:
    site = write_plugin(tmp_path, yaml=False)
    done = run_cli("dataset=smoke", "arms=[rag,echo]", f"out={tmp_path / 'run'}", env=_env(site))
    assert done.returncode == 2
    assert last_line(done.stderr) == (
        "error: plug-in arm echo (armbench-echo): no conf/arm/echo.yaml in package "
        "armbench_echo; ship the arm's default options there"
    )
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_a_plugin_runs_paired_with_rag_and_takes_overrides(tmp_path: Path) -> None:
    site = write_plugin(tmp_path)
    out = tmp_path / "run"
    args = ("dataset=smoke", "arms=[rag,echo]", "arm_options.echo.last=4", f"out={out}")
    done = run_cli(*args, "progress=false", env=_env(site))
    assert done.returncode == 0, done.stderr[-2000:]
    records = load_records(out)
    assert len(records) == 16
    for record in records.values():
        assert set(record["arms"]) == {"rag", "echo"}
        assert (
            len(record["arms"]["echo"]["retrieved_ids"]) == 4
        )  # the last 4 turns (smoke-2 has exactly 4)
