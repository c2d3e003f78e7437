"""Hostile ids never name a path outside the run directory (issue 8, item 1)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from bench.errors import ContainmentError
from bench.paths import MAX_NAME, contained, safe_name
from tests.support.e2e_support import ROOT, last_line, load_records, run_cli

SMOKE = ROOT / "datasets/fixtures/smoke_locomo.json"
HOSTILE = [
    "../x",
    ".",
    "..",
    "a/b",
    "a\\b",
    "a:b",
    "a_b",
    "x" * 300,
    "日本語/../..",
    ".hidden",
    "-",
    "~",
]


@pytest.mark.parametrize("external_id", [*HOSTILE, "", "/etc/passwd", "\ud800"])
def test_safe_name_is_one_plain_bounded_component(external_id: str) -> None:
    name = safe_name(external_id)
    assert name and name not in (".", "..") and not name.startswith(".")
    assert "/" not in name and "\\" not in name and "\0" not in name
    assert len(name) <= MAX_NAME + 11 and name.isascii()
    assert Path(name).name == name


def test_safe_name_keeps_plain_ids_and_separates_ids_that_clean_up_alike() -> None:
    assert safe_name("conv-26") == "conv-26"
    names = [safe_name(i) for i in [*HOSTILE, "", "/etc/passwd", "x" * 301]]
    assert len(set(names)) == len(names)
    assert safe_name("a:b").startswith("a_b-") and safe_name("a_b") == "a_b"


def test_contained_refuses_the_root_itself_escapes_and_symlinks_out(tmp_path: Path) -> None:
    root = tmp_path / "run"
    (root / "stores").mkdir(parents=True)
    assert contained(root / "stores" / "a", root) == (root / "stores" / "a").resolve()
    for bad in (root, root / "..", root / "stores" / ".." / "..", Path("/etc/passwd")):
        with pytest.raises(ContainmentError):
            contained(bad, root)
    (root / "stores" / "link").symlink_to(tmp_path)
    with pytest.raises(ContainmentError):
        contained(root / "stores" / "link" / "victim", root)


def _tree_hash(top: Path, skip: Path) -> dict[str, str]:
    """Every file and folder under `top` except `skip`: path -> content hash ('dir' for folders)."""
    out = {}
    for path in sorted(top.rglob("*")):
        if path == skip or skip in path.parents:
            continue
        out[str(path.relative_to(top))] = (
            hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
        )
    return out


def _hostile_dataset(tmp_path: Path, ids: list[str]) -> Path:
    base = json.loads(SMOKE.read_text())[0]
    data = [{**base, "sample_id": i, "qa": base["qa"][:2]} for i in ids]
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(data))
    return path


def test_hostile_ids_through_a_real_run_change_nothing_outside_the_run_dir(
    tmp_path: Path,
) -> None:
    sandbox = tmp_path / "sandbox"
    victim = sandbox / "victim"
    victim.mkdir(parents=True)
    (victim / "keep.txt").write_text("keep me")
    (sandbox / "x").write_text("next to the run dir")
    run = sandbox / "run"
    ids = [*HOSTILE, str(victim), str(sandbox / "x")]
    dataset = _hostile_dataset(tmp_path, ids)
    before = _tree_hash(tmp_path, run)
    for _ in range(2):  # the second pass resumes (reopens, checks, rewrites nothing)
        proc = run_cli("dataset=smoke", f"dataset.path={dataset}", f"out={run}", "progress=false")
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert _tree_hash(tmp_path, run) == before
    records = load_records(run)
    assert sorted({r["conversation_id"] for r in records.values()}) == sorted(ids)
    assert all(r["arms"][a]["status"] == "ok" for r in records.values() for a in r["arms"])
    for arm in ("rag", "neuromorphic"):  # one store per conversation: none wiped another
        assert len(list((run / "stores" / arm).iterdir())) == len(ids)


@pytest.mark.parametrize(
    ("ids", "named"),
    [(["ok", ""], "conversations[1].sample_id"), (["ok", "ok"], "conversations[1].sample_id")],
)
def test_empty_or_repeated_ids_are_refused_naming_the_json_path(
    tmp_path: Path, ids: list[str], named: str
) -> None:
    dataset = _hostile_dataset(tmp_path, ids)
    proc = run_cli("dataset=smoke", f"dataset.path={dataset}", f"out={tmp_path / 'run'}")
    assert proc.returncode == 2
    line = last_line(proc.stderr)
    assert line.startswith("error: ") and "hostile.json" in line and named in line
    assert not (tmp_path / "run" / "questions").exists()


def test_a_non_string_id_is_refused_naming_the_json_path(tmp_path: Path) -> None:
    base = json.loads(SMOKE.read_text())[0]
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps([{**base, "sample_id": ["../x"]}]))
    proc = run_cli("dataset=smoke", f"dataset.path={path}", f"out={tmp_path / 'run'}")
    assert proc.returncode == 2
    assert "conversations[0].sample_id" in last_line(proc.stderr)
