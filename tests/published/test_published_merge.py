"""`bench.published merge` verifies the import it is given (issue 40, defect 9).

Before, an imported directory that failed `bench.verify` (a forged answer, the
`imported` marker removed) merged with exit 0, the result lost its guard against
re-answering, and the merged run's new manifest verified `ok`. Now merge checks the
import against its manifest and that every result keeps its marker: one line, exit 2,
nothing written.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.paths import PROJECT_ROOT
from bench.published.cli import main as published_main
from bench.verify.check import write_manifest

SMOKE = PROJECT_ROOT / "datasets" / "fixtures" / "smoke_locomo.json"
ANSWERS = PROJECT_ROOT / "datasets" / "fixtures" / "smoke_eval_results.json"


@pytest.fixture(scope="module")
def runs(
    tmp_path_factory: pytest.TempPathFactory, smoke_raw_run: Path
) -> Iterator[tuple[Path, Path]]:
    """An offline smoke run (tests/conftest.py, read-only) and the smoke answers imported."""
    root = tmp_path_factory.mktemp("merge")
    argv = [str(ANSWERS), "--format", "evermemos", "--out", str(root / "imported")]
    assert (
        published_main([*argv, "--arm", "pub", "--judge-model", "j", "--dataset", str(SMOKE)]) == 0
    )
    yield smoke_raw_run, root / "imported"


def _copy(src: Path, dst: Path) -> Path:
    import shutil

    shutil.copytree(src, dst)
    return dst


def _edit_first_record(imported: Path, edit: Callable[[dict[str, Any]], None]) -> None:
    path = sorted((imported / "questions").glob("*.json"))[0]
    record = json.loads(path.read_text(encoding="utf-8"))
    edit(record["arms"]["pub"])
    path.write_text(json.dumps(record), encoding="utf-8")


def _forge(result: dict[str, Any]) -> None:
    result["answer"] = "a forged answer"


def _unmark(result: dict[str, Any]) -> None:
    result["imported"] = None


@pytest.mark.slow
@pytest.mark.parametrize(("edit", "rewrite_manifest", "expected"), [
    (_forge, False, "does not match its MANIFEST.json (1 mismatch(es), first: changed questions/"),
    (_unmark, False, "does not match its MANIFEST.json"),
    (_unmark, True, "arm pub has no imported marker"),
])  # fmt: skip
def test_a_tampered_import_is_refused_in_one_line(
    runs: tuple[Path, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    edit: Callable[[dict[str, Any]], None],
    rewrite_manifest: bool,
    expected: str,
) -> None:
    run, imported = runs
    tampered = _copy(imported, tmp_path / "tampered")
    _edit_first_record(tampered, edit)
    if rewrite_manifest:  # someone re-blessed the edit: the marker check still holds
        write_manifest(tampered)
    out = tmp_path / "merged"
    assert published_main(["merge", str(run), str(tampered), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and expected in err, err
    assert not out.exists()


@pytest.mark.slow
def test_an_untouched_import_merges(runs: tuple[Path, Path], tmp_path: Path) -> None:
    run, imported = runs
    out = tmp_path / "merged"
    assert published_main(["merge", str(run), str(imported), "--out", str(out)]) == 0
    merged = [json.loads(p.read_text()) for p in (out / "questions").glob("*.json")]
    pub = [r["arms"]["pub"] for r in merged if "pub" in r["arms"]]
    assert pub and all(result["imported"] is not None for result in pub)


@pytest.mark.slow
def test_export_never_overwrites_a_file_or_writes_into_a_run(
    runs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 40, item 12: `export --out` overwrote any file, a record of a run included."""
    run, imported = runs
    record = sorted((run / "questions").glob("*.json"))[0]
    before = record.read_bytes()
    taken = tmp_path / "taken.json"
    taken.write_text("mine", encoding="utf-8")
    argv = [
        "export",
        str(imported),
        "--format",
        "evermemos",
        "--arm",
        "pub",
        "--dataset",
        str(SMOKE),
    ]
    for out, expected in (
        (record, "already exists: give a new file name"),
        (taken, "already exists: give a new file name"),
        (run / "questions" / "new.json", f"inside run directory {run}: write it outside the run"),
    ):
        assert published_main([*argv, "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: --out ") and err.count("\n") == 1 and expected in err, err
    assert record.read_bytes() == before and taken.read_text(encoding="utf-8") == "mine"
    assert not (run / "questions" / "new.json").exists()
    assert published_main([*argv, "--out", str(tmp_path / "fresh.json")]) == 0


def _dead_pid() -> int:
    import subprocess
    import sys

    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(child.stdout)


@pytest.mark.slow
def test_a_killed_imports_folder_is_removed_by_the_next_import(runs: tuple[Path, Path]) -> None:
    """Issue 40, item 12: a killed import left `.<out>.<random>.importing` for ever.

    The next import to the same --out removes the folders of writers that no longer run,
    and nothing else: not a live writer's, not a folder of another name."""
    _, imported = runs
    out = imported.parent / "again"
    dead = out.parent / f".again.{_dead_pid()}.k1ll3d.importing"
    live = out.parent / f".again.{os.getpid()}.l1v3.importing"
    other = out.parent / ".again.notours"
    for folder in (dead, live, other):
        (folder / "questions").mkdir(parents=True)
    argv = [str(ANSWERS), "--format", "evermemos", "--out", str(out), "--arm", "pub"]
    assert published_main([*argv, "--judge-model", "j", "--dataset", str(SMOKE)]) == 0
    assert not dead.exists() and live.is_dir() and other.is_dir() and out.is_dir()
