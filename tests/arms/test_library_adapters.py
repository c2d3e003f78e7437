"""Library adapters without their libraries: declared as plug-ins, one-line errors.

These run in the default suite (no extra installed); tests/arms/test_library_mem0.py and
tests/arms/test_library_graphiti.py run the arms themselves with their libraries installed
(.ci/run's mem0 and graphiti steps).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import re
import sys
import tomllib
from datetime import UTC, datetime, timedelta
from importlib import metadata
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from arms.library.graphiti import (
    EPOCH,
    GraphitiArm,
    GraphitiConfig,
    fact_item,
    group_id,
    load_graphiti,
    reference_time,
)
from arms.library.mem0 import Mem0Config, load_memory_class
from bench.arm import ArmServices
from bench.arm.plugins import PluginArm
from bench.arm.registry import arm_kind
from bench.errors import ConfigError
from bench.types import Conversation, Session, Turn
from tests.support.e2e_support import ROOT, last_line, run_cli
from tests.support.plugin_install import install_plugin


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


def run_without_extra(kind: str, target: str, tmp_path: Path) -> str:
    """`arms=[rag,<kind>]` on the smoke set where its library is missing; stderr's last line."""
    site = tmp_path / "site"
    declared = {ep.name for ep in metadata.entry_points(group="armbench.arms")}
    if kind not in declared:  # armbench not installed from this tree: declare it here
        project = tmp_path / "project"
        project.mkdir()
        (project / "pyproject.toml").write_text(
            f'[project]\nname = "armbench-{kind}-decl"\nversion = "0.1"\n\n'
            f'[project.entry-points."armbench.arms"]\n{kind} = "{target}"\n'
        )
        install_plugin(project, site)
    done = run_cli(
        "dataset=smoke",
        f"arms=[rag,{kind}]",
        f"out={tmp_path / 'run'}",
        env={"PYTHONPATH": f"{ROOT}:{site}"},
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    return last_line(done.stderr)


@pytest.mark.skipif(importlib.util.find_spec("mem0") is not None, reason="mem0ai is installed")
def test_the_run_without_the_extra_is_one_line_and_exit_2(tmp_path: Path) -> None:
    line = run_without_extra("mem0", "arms.library.mem0:Mem0Arm", tmp_path)
    assert line.startswith("error: arm mem0: cannot import Mem0 (")
    assert line.endswith("install the extra: pip install 'armbench[mem0]'")


def test_graphiti_is_declared_as_a_plugin_with_its_default_yaml() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    target = project["entry-points"]["armbench.arms"]["graphiti"]
    assert target == "arms.library.graphiti:GraphitiArm"
    pins = project["optional-dependencies"]["graphiti"]
    assert any(pin.startswith("graphiti-core>=") for pin in pins)
    assert any(pin.startswith("kuzu>=") for pin in pins)
    conf = PluginArm("graphiti", target, "armbench").conf_dir()
    options = yaml.safe_load((conf / "arm" / "graphiti.yaml").read_text(encoding="utf-8"))
    assert options == {f.name: f.default for f in dataclasses.fields(GraphitiConfig)}


def test_graphiti_missing_is_one_line_naming_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "graphiti_core", None)  # import graphiti_core -> ImportError
    with pytest.raises(ConfigError, match=r"install the extra: pip install 'armbench\[graphiti\]'"):
        load_graphiti()


def test_graphiti_refuses_a_run_without_an_llm_extractor(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Graphiti has no verbatim mode: with the offline models it would fail every turn."""
    monkeypatch.setattr("arms.library.graphiti.load_graphiti", lambda: None)
    services = ArmServices(
        embedder=None,
        tokens=None,
        store_dir=tmp_path,
        run_dir=tmp_path,  # type: ignore[arg-type]
        llm_proxy=lambda arm, phase: "http://127.0.0.1:1/v1",
    )
    with pytest.raises(ConfigError, match="set provider.extractor to an LLM"):
        GraphitiArm("graphiti", GraphitiConfig(), services)


@pytest.mark.skipif(
    importlib.util.find_spec("graphiti_core") is not None, reason="graphiti-core is installed"
)
def test_graphiti_run_without_the_extra_is_one_line_and_exit_2(tmp_path: Path) -> None:
    line = run_without_extra("graphiti", "arms.library.graphiti:GraphitiArm", tmp_path)
    assert line.startswith("error: arm graphiti: cannot import Graphiti with Kuzu (")
    assert line.endswith("install the extra: pip install 'armbench[graphiti]'")


def test_cognee_is_refused_in_one_line_with_the_reason(tmp_path: Path) -> None:
    """Cognee was tried and cannot start offline: the run says so instead of "unknown"."""
    done = run_cli("dataset=smoke", "arms=[rag,cognee]", f"out={tmp_path / 'run'}")
    assert done.returncode == 2
    assert last_line(done.stderr) == (
        "error: arms=['rag', 'cognee']: cognee is not an arm: Cognee downloads tiktoken's "
        "cl100k_base encoding at start-up, so it cannot run offline (docs/libraries.md); "
        "benchmark Graphiti (arms=[graphiti]) or Mem0 (arms=[mem0]) instead"
    )
    with pytest.raises(ConfigError, match=r"^arm_options\.x\.kind: cognee is not an arm: "):
        arm_kind("cognee", "arm_options.x.kind")


def test_graphiti_group_ids_use_its_alphabet_and_stay_apart() -> None:
    ids = ["conv-26", "conv.26", "conv:26", "../x", ""]
    groups = [group_id(i) for i in ids]
    assert groups[0] == "conv-26"
    assert all(re.fullmatch(r"[A-Za-z0-9_-]+", g) for g in groups)  # validate_group_id's rule
    assert len(set(groups)) == len(ids)


def test_graphiti_reference_times_keep_turn_order_and_fall_back_to_the_epoch() -> None:
    turns = (Turn("A", "hi", "D1:1", 1), Turn("B", "yo", "D1:2", 1))
    dated = Session(1, "1:56 pm on 8 May, 2023", turns)
    undated = Session(2, "someday", (Turn("A", "x", "D2:1", 2),))
    conv = Conversation("c", ("A", "B"), (dated, undated))
    first, second = (reference_time(conv, t, i) for i, t in enumerate(turns))
    assert first == datetime(2023, 5, 8, tzinfo=UTC) and second - first == timedelta(seconds=1)
    assert reference_time(conv, undated.turns[0], 2) == EPOCH + timedelta(seconds=2)


def test_graphiti_facts_map_to_their_turns_by_episode() -> None:
    edge = SimpleNamespace(
        fact="A said: hi", valid_at=datetime(2023, 5, 8, tzinfo=UTC), episodes=["u2", "gone", "u1"]
    )
    item = fact_item(edge, 1, {"u1": "D1:1", "u2": "D1:2"})
    assert item.text == "[2023-05-08] A said: hi"
    assert item.source_ids == ("D1:1", "D1:2")  # sorted; an unknown episode is dropped
    assert item.score == 0.5 and item.kind == "fact"  # reciprocal rank of the second fact
    bare = fact_item(SimpleNamespace(fact="f", valid_at=None, episodes=None), 0, {})
    assert (bare.text, bare.source_ids, bare.score) == ("f", (), 1.0)
