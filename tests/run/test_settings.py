"""Config boundary, lazy name table and run-directory identity."""

from __future__ import annotations

import json
import sys

import pytest
from hydra import compose, initialize_config_dir

from bench.arm.registry import ARM_KINDS
from bench.config import RunConfig
from bench.errors import ConfigError
from bench.names import did_you_mean
from bench.paths import CONF_DIR
from bench.run.directory import RunDirectory, identity
from bench.run.settings import arm_specs, check_group_overrides, group_options, load_run_config


def compose_run(*overrides: str) -> RunConfig:
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return load_run_config(compose(config_name="config", overrides=list(overrides)))


def test_importing_bench_pulls_in_no_heavy_dependency() -> None:
    import subprocess

    code = (
        "import sys, bench, bench.arm.registry, bench.records, bench.config;"
        "heavy = ('numpy', 'lancedb', 'openai', 'torch', 'arms.rag');"
        "heavy = [m for m in heavy if m in sys.modules];"
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("group", ["dataset", "provider", "judge", "experiment"])
def test_every_config_group_option_composes(group: str) -> None:
    options = group_options(group)
    assert options
    for option in options:
        run = compose_run(f"{group}={option}")
        if group == "judge" and option != "none":
            assert run.judges
        assert arm_specs(run)


def test_default_run_is_offline_with_all_four_arms() -> None:
    run = compose_run()
    assert run.provider.answerer.kind == "offline"
    assert [s.name for s in arm_specs(run)] == ["raw", "rag", "neuromorphic", "tuned"]
    assert run.out == "results/locomo-offline"


def test_arm_options_become_typed_dataclasses() -> None:
    spec = {s.name: s for s in arm_specs(compose_run("arm_options.rag.top_k=3"))}["rag"]
    assert type(spec.options).__name__ == "RagConfig" and spec.options.top_k == 3


def test_unknown_arm_option_key_is_a_config_error() -> None:
    run = compose_run("+arm_options.rag.topk=3")
    with pytest.raises(ConfigError, match="arm_options.rag"):
        arm_specs(run)


def test_unknown_arm_suggests_the_closest_name() -> None:
    with pytest.raises(ConfigError, match="did you mean 'tuned'"):
        arm_specs(compose_run("arms=[raw,tunde]"))


def test_group_choices_are_checked_before_hydra() -> None:
    with pytest.raises(ConfigError, match="did you mean 'smoke'"):
        check_group_overrides(["dataset=smok"])
    check_group_overrides(["dataset=smoke", "arms=[raw]", "limit.questions=2"])


def test_registry_is_lazy_and_names_every_kind() -> None:
    # A superset check: adding an arm by the README recipe must keep this test green.
    assert {"raw", "rag", "neuromorphic", "http", "mcp"} <= set(ARM_KINDS)
    for kind in ARM_KINDS.values():  # every entry names real `module:attribute` strings
        assert kind.implementation.count(":") == 1 and kind.config.count(":") == 1
    assert did_you_mean("neuromorphc", list(ARM_KINDS)) == " did you mean 'neuromorphic'?"
    assert did_you_mean("zzz", list(ARM_KINDS)) == ""


def test_run_json_never_holds_the_key(tmp_path, monkeypatch) -> None:
    secret = "sk-test-" + "a1b2c3d4" * 4
    monkeypatch.setenv("ARMBENCH_TEST_KEY", secret)
    run = compose_run("provider=openai", "provider.answerer.api_key_env=ARMBENCH_TEST_KEY")
    run.out = str(tmp_path)
    run.provider.answerer.base_url = f"http://127.0.0.1:9/v1?key={secret}"  # even if misplaced
    rundir = RunDirectory(tmp_path)
    rundir.write_run_json(run, identity(run, "0" * 64, "1" * 64))
    text = (tmp_path / "run.json").read_text()
    assert secret not in text and "ARMBENCH_TEST_KEY" in text
    assert secret not in json.dumps(rundir.record_provenance)  # stamped on every record
    assert json.loads(text)["identity"]["dataset_sha256"] == "0" * 64


def test_identity_mismatch_names_what_changed(tmp_path) -> None:
    run = compose_run()
    run.out = str(tmp_path)
    rundir = RunDirectory(tmp_path)
    rundir.write_run_json(run, identity(run, "a" * 64, "p" * 64))
    rundir.check_identity(identity(run, "a" * 64, "p" * 64))  # same: fine
    (tmp_path / "questions").mkdir()
    (tmp_path / "questions" / "q.json").write_text("{}")  # a first result fixes the identity
    with pytest.raises(ConfigError, match="dataset_sha256"):
        rundir.check_identity(identity(run, "b" * 64, "p" * 64))


@pytest.mark.parametrize("provider", ["llamacpp", "vllm"])
def test_embedder_override_works_as_typed_in_local_providers(provider: str) -> None:
    url = "http://127.0.0.1:8081/v1"
    cfg = compose_run(
        f"provider={provider}", "provider.embedder.kind=openai", f"provider.embedder.base_url={url}"
    )
    assert (cfg.provider.embedder.kind, cfg.provider.embedder.base_url) == ("openai", url)


def test_limits_count_questions_then_cap_each_conversation() -> None:
    from bench.config import LimitConfig

    assert LimitConfig(questions=7).kept([5, 5, 5]) == [5, 2, 0]
    assert LimitConfig(questions=4).kept([1] * 6) == [1, 1, 1, 1, 0, 0]  # LongMemEval
    assert LimitConfig(conversations=2, per_conversation=2).kept([5, 5, 5]) == [2, 2, 0]
    assert LimitConfig(per_conversation=3, questions=4).kept([5, 5]) == [3, 1]
    assert LimitConfig().kept([2, 0, 3]) == [2, 0, 3]


def test_the_licence_is_an_spdx_expression_setuptools_reads() -> None:
    """`license = { text = ... }` drew four deprecation walls per install (issue 41)."""
    import tomllib

    from bench.paths import PROJECT_ROOT

    data = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())
    assert data["project"]["license"] == "MIT"  # the same licence, as PEP 639 spells it
    assert "setuptools>=77" in data["build-system"]["requires"]
