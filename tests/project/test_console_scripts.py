"""The console scripts (`armbench-run`, `armbench-summarise`, ...): each is the `python -m` command.

pip writes each script as `sys.exit(<function>())` with `sys.argv[0]` the script's name;
the tests call the functions that way, in a subprocess, as an installed script would.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS: dict[str, str] = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
USER_COMMANDS = ("run", "summarise", "report", "suite", "screen", "verify", "board", "calibrate")


def _as_script(name: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run script `name` as pip's wrapper does: argv[0] its name, `sys.exit(function())`."""
    module, function = SCRIPTS[name].split(":")
    code = f"import sys; sys.argv[0] = {name!r}; from {module} import {function}; "
    code += f"sys.exit({function}())"
    return subprocess.run(
        [sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


def test_every_user_command_has_a_script_naming_a_function() -> None:
    assert SCRIPTS["armbench"] == "bench.quick.__main__:console"  # `armbench run ...`
    for command in USER_COMMANDS:
        assert f"armbench-{command}" in SCRIPTS, command
    for name, target in SCRIPTS.items():
        module, function = target.split(":")
        assert callable(getattr(importlib.import_module(module), function)), name


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(n for n in SCRIPTS if n != "armbench"))
def test_each_script_answers_help(name: str) -> None:
    done = _as_script(name, "--help")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip(), name


def test_a_typo_is_one_line_and_the_corrected_command_works(tmp_path: Path) -> None:
    """`armbench-summarise` on a mistyped run folder, then on the right one."""
    typo = _as_script("armbench-summarise", "results/smoke-ofline-v0.3.0")
    assert typo.returncode == 2 and typo.stderr.count("\n") == 1, typo.stderr
    assert typo.stderr.startswith("error: results/smoke-ofline-v0.3.0: no questions/ folder")
    right = _as_script("armbench-summarise", "results/smoke-offline-v0.3.0")
    assert right.returncode == 0, right.stderr[-2000:]
    assert "## Accuracy per arm" in right.stdout
