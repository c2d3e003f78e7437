"""Library adapters without their libraries: declared as plug-ins, one-line errors.

These run in the default suite (no extra installed); tests/test_library_mem0.py runs
the mem0 arm itself with mem0ai installed (.ci/run's mem0 step).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
import yaml

from arms.library.mem0 import Mem0Config, load_memory_class
from bench.arm.plugins import PluginArm
from bench.errors import ConfigError
from tests.e2e_support import ROOT, last_line, run_cli
from tests.plugin_install import install_plugin


def test_mem0_is_declared_as_a_plugin_with_its_default_yaml() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    target = project["entry-points"]["armbench.arms"]["mem0"]
    assert target == "arms.library.mem0:Mem0Arm"
    assert any(pin.startswith("mem0ai>=") for pin in project["optional-dependencies"]["mem0"])
    conf = PluginArm("mem0", target, "armbench").conf_dir()
    options = yaml.safe_load((conf / "arm" / "mem0.yaml").read_text(encoding="utf-8"))
    defaults = {f.name: f.default for f in dataclasses.fields(Mem0Config)}
    assert options == defaults  # the YAML states every field, at the dataclass default


def test_openrouter_key_is_refused_before_mem0_bypasses_the_proxy(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", "x")
    with pytest.raises(ConfigError, match="OPENROUTER_API_KEY is set"):
        load_memory_class(tmp_path)


def test_a_missing_library_is_one_line_naming_the_extra(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    monkeypatch.setitem(sys.modules, "mem0", None)  # import mem0 -> ImportError
    with pytest.raises(ConfigError, match=r"install the extra: pip install 'armbench\[mem0\]'"):
        load_memory_class(tmp_path)


@pytest.mark.skipif(importlib.util.find_spec("mem0") is not None, reason="mem0ai is installed")
def test_the_run_without_the_extra_is_one_line_and_exit_2(tmp_path: Path) -> None:
    site = tmp_path / "site"
    declared = {ep.name for ep in metadata.entry_points(group="armbench.arms")}
    if "mem0" not in declared:  # armbench not installed from this tree: declare it here
        project = tmp_path / "project"
        project.mkdir()
        (project / "pyproject.toml").write_text(
            '[project]\nname = "armbench-mem0-decl"\nversion = "0.1"\n\n'
            '[project.entry-points."armbench.arms"]\nmem0 = "arms.library.mem0:Mem0Arm"\n'
        )
        install_plugin(project, site)
    done = run_cli("dataset=smoke", "arms=[rag,mem0]", f"out={tmp_path / 'run'}",
                   env={"PYTHONPATH": f"{ROOT}:{site}"})  # fmt: skip
    assert done.returncode == 2
    assert last_line(done.stderr).startswith("error: arm mem0: cannot import Mem0 (")
    assert last_line(done.stderr).endswith("install the extra: pip install 'armbench[mem0]'")
    assert "Traceback" not in done.stderr
