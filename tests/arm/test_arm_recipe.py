"""The README's "Adding your memory system as an arm" recipe, followed literally.

The tracked files are copied to a temporary folder; every fenced block of the README
section is applied as it says (`# file: PATH` creates PATH with the rest of the block,
`# in PATH, after the line with "ANCHOR":` inserts the rest after the first line holding
ANCHOR, a `bash` block is run). The recipe's `pip install ./keyword_arm` is done offline
by tests/support/plugin_install.py (the packages and the `.dist-info` pip would write, in a
folder put on PYTHONPATH: no network, the shared environment untouched); the run then
finds the arm through its `armbench.arms` entry point, with no edit of armbench. The
registry, settings, layout and field-docstring tests stay green in the copy, and ruff
(lint and format) accepts the plug-in's module.

A user who already followed the recipe in their tree (committed or not) has its files
and lines in the copy: a block whose text is already there is not applied twice.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.e2e_support import ROOT, load_records
from tests.support.plugin_install import install_plugin

SECTION = "## Adding your memory system as an arm"
_FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.M | re.S)
_INSERT = re.compile(r'^# in (\S+), after the line with "(.+)":$')
_TESTS = [
    "tests/run/test_settings.py",
    "tests/project/test_layout.py",
    "tests/project/test_field_docs.py",
]


def recipe_blocks() -> list[tuple[str, str]]:
    """(language, body) of every fenced block in the README's arm section, in order."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split(SECTION, 1)[1].split("\n## ", 1)[0]
    return [(m.group(1), m.group(2)) for m in _FENCE.finditer(section)]


def apply_block(copy: Path, language: str, body: str) -> list[str] | None:
    """Apply one block to the copy; return a `bash` block's command as argv, else None."""
    first, _, rest = body.partition("\n")
    if language == "bash":
        return shlex.split(body.strip())
    if first.startswith("# file: "):
        path = copy / first.removeprefix("# file: ").strip()
        if path.exists() and path.read_text(encoding="utf-8") == rest:
            return None  # the recipe was already followed here
        assert not path.exists(), f"{path} already exists: the recipe would overwrite it"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(rest, encoding="utf-8")
        return None
    match = _INSERT.match(first)
    assert match, f"README block does not say where it goes: {first!r}"
    target = copy / match.group(1)
    if rest in target.read_text(encoding="utf-8"):
        return None  # already inserted by a user who followed the recipe
    lines = target.read_text(encoding="utf-8").splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if match.group(2) in line)
    target.write_text("".join(lines[: at + 1]) + rest + "".join(lines[at + 1 :]), "utf-8")
    return None


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the tracked files with the recipe applied; the run command is executed."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the tracked files to copy are unknown")
    root = tmp_path_factory.mktemp("recipe") / "armbench"
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    for rel in filter(None, listed.split("\0")):
        if (ROOT / rel).is_file():  # a tracked file deleted in the work tree is skipped
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, root / rel)
    commands = [cmd for lang, body in recipe_blocks() if (cmd := apply_block(root, lang, body))]
    assert [c[:2] for c in commands] == [["pip", "install"], ["python", "-m"]], commands
    install_plugin(root / commands[0][2], root / SITE)
    argv = commands[1]
    assert argv[:3] == ["python", "-m", "bench.run"]
    done = _run(root, [sys.executable, *argv[1:], f"out={root / 'run'}", "progress=false"])
    assert done.returncode == 0, done.stderr[-3000:]
    return root


SITE = "site"
"""Where the copy's plug-in is installed (on PYTHONPATH for every command in the copy)."""


def _run(cwd: Path, argv: list[str]) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {
        "PYTHONPATH": str(cwd / SITE)
    }
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, env=env, timeout=900)


def test_the_recipe_is_a_plugin_and_edits_no_armbench_file() -> None:
    heads = [body.partition("\n")[0] for _, body in recipe_blocks()]
    assert "# file: keyword_arm/armbench_keyword/__init__.py" in heads
    assert "# file: keyword_arm/armbench_keyword/conf/arm/keyword.yaml" in heads
    assert "# file: keyword_arm/pyproject.toml" in heads
    assert not [h for h in heads if h.startswith("# in ")]  # no edit of an armbench file
    assert not [h for h in heads if h.startswith(("# file: bench/", "# file: conf/"))]


@pytest.mark.slow
def test_the_new_arm_answers_every_question_in_the_copy(copy: Path) -> None:
    code = "import armbench_keyword as m; print(m.__file__)"
    where = _run(copy, [sys.executable, "-c", code])
    assert where.stdout.strip() == str(copy / SITE / "armbench_keyword" / "__init__.py")
    records = load_records(copy / "run")
    assert len(records) == 16  # the smoke fixture
    for record in records.values():
        assert set(record["arms"]) == {"raw", "rag", "keyword"}  # paired per question
        result = record["arms"]["keyword"]
        assert result["status"] == "ok" and result["retrieved_ids"], record["question_id"]
    meta = json.loads((copy / "run" / "run.json").read_text())
    assert meta["config"]["arm_options"]["keyword"] == {"kind": "keyword", "top_k": 5}


@pytest.mark.slow
def test_the_copy_keeps_the_registry_and_style_tests_green(copy: Path) -> None:
    done = _run(copy, [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *_TESTS])
    assert done.returncode == 0, done.stdout[-3000:]
    for ruff in (["check"], ["format", "--check"]):
        module = "keyword_arm/armbench_keyword/__init__.py"
        lint = _run(copy, [sys.executable, "-m", "ruff", *ruff, module])
        assert lint.returncode == 0, lint.stdout[-3000:]
