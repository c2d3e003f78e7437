"""`bench.verify`: manifests of runs, one line per changed file, optional Ed25519 signing."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from bench.verify.check import main, manifest_current, verify_run, write_manifest
from bench.verify.files import MANIFEST
from tests.support.e2e_support import ROOT, run_cli

COMMITTED = sorted(p for p in (ROOT / "results").iterdir() if (p / "run.json").is_file())


@pytest.mark.parametrize("run_dir", COMMITTED, ids=lambda p: p.name)
def test_committed_runs_verify(run_dir: Path) -> None:
    """Every committed reference run matches its manifest."""
    verdict = verify_run(run_dir)
    assert verdict.ok, verdict.lines()
    assert "run.json" in verdict.unchanged and len(verdict.unchanged) > 10


@pytest.fixture
def run_copy(tmp_path: Path) -> Path:
    """A copy of the committed smoke run (its manifest included)."""
    target = tmp_path / "run"
    shutil.copytree(ROOT / "results" / "smoke-offline-v0.1.0", target)
    return target


def test_any_edit_fails_with_one_line_per_file(
    run_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Changed, missing and extra files each get one line; exit status 1."""
    assert main([str(run_copy)]) == 0
    record, gone = sorted((run_copy / "questions").glob("*.json"))[:2]
    data = json.loads(record.read_text())
    data["arms"]["raw"]["correct"] = not data["arms"]["raw"]["correct"]
    record.write_text(json.dumps(data, indent=1) + "\n")
    gone.unlink()
    (run_copy / "questions" / "smoke-9_0.json").write_text("{}")
    (run_copy / "SUMMARY.md").write_text("# edited\n")  # derived: rebuilt, not checked
    capsys.readouterr()
    assert main([str(run_copy)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[:-1] == [
        f"changed questions/{record.name}",
        f"missing questions/{gone.name}",
        "extra questions/smoke-9_0.json",
    ]
    assert lines[-1].startswith(f"FAILED {run_copy}: 3 mismatches")
    assert "; 1 derived files not checked; no signature checked" in lines[-1]


def test_manifest_current_until_a_result_file_is_newer(run_copy: Path) -> None:
    """make's rule plus the file list: a newer or a removed record makes it stale."""
    write_manifest(run_copy)
    assert manifest_current(run_copy)
    record = sorted((run_copy / "questions").glob("*.json"))[0]
    earlier = record.stat().st_mtime_ns - 1_000_000_000  # the record now newer than it
    os.utime(run_copy / MANIFEST, ns=(earlier, earlier))
    assert not manifest_current(run_copy)
    write_manifest(run_copy)
    assert manifest_current(run_copy)
    record.unlink()  # a removed file leaves nothing newer: the file list tells
    assert not manifest_current(run_copy)
    (run_copy / MANIFEST).unlink()
    assert not manifest_current(run_copy)


def test_caches_and_reports_are_not_results(run_copy: Path) -> None:
    """Stores, caches, report.html and temp files do not count as extra files."""
    (run_copy / "cache").mkdir()
    (run_copy / "cache" / "responses.sqlite").write_bytes(b"x")
    (run_copy / "report.html").write_text("<html>")
    (run_copy / "questions" / ".smoke-1_0.json.abc.tmp").write_text("partial")
    assert verify_run(run_copy).ok


def test_run_json_edit_is_caught(run_copy: Path) -> None:
    """A run.json edit (e.g. a forged commit) is a changed file."""
    meta = json.loads((run_copy / "run.json").read_text())
    meta["provenance"]["git_commit"] = "0" * 40
    (run_copy / "run.json").write_text(json.dumps(meta))
    assert verify_run(run_copy).changed == ["run.json"]


def test_missing_manifest_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """No manifest: exit 2 with one `error:` line naming the fix."""
    (tmp_path / "questions").mkdir()
    assert main([str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "--write" in err[0]


@pytest.mark.slow
def test_every_run_writes_a_manifest(tmp_path: Path) -> None:
    """`bench.run` finishes by writing MANIFEST.json, which then verifies."""
    out = tmp_path / "run"
    proc = run_cli("dataset=smoke", "arms=[raw]", f"out={out}", "progress=false", "report=true")
    assert proc.returncode == 0, proc.stderr[-2000:]
    manifest = json.loads((out / MANIFEST).read_text())
    assert "SUMMARY.md" in manifest["derived"] and "SUMMARY.md" not in manifest["files"]
    assert "report.html" in manifest["derived"] and manifest["prompts"]["answer"]
    assert manifest["dataset"]["sha256"] and "code_commit" in manifest
    proc = run_cli(str(out), module="bench.verify")
    assert proc.returncode == 0 and proc.stdout.strip().startswith(f"ok {out}")


def test_signed_manifest(run_copy: Path, tmp_path: Path) -> None:
    """With a key the manifest is signed; a forged manifest fails the signature check."""
    ed25519 = pytest.importorskip("cryptography.hazmat.primitives.asymmetric.ed25519")
    serialization = pytest.importorskip("cryptography.hazmat.primitives.serialization")
    key = ed25519.Ed25519PrivateKey.generate()
    private, public = tmp_path / "key.pem", tmp_path / "key.pub.pem"
    private.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    public.write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    write_manifest(run_copy, private)
    assert verify_run(run_copy, public).ok
    # re-hash after an edit and rewrite the manifest without the key: signature no longer fits
    (run_copy / "SUMMARY.md").write_text("# forged\n")
    manifest = json.loads((run_copy / MANIFEST).read_text())
    manifest["files"]["SUMMARY.md"] = "0" * 64
    (run_copy / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    verdict = verify_run(run_copy, public)
    assert "changed MANIFEST.sig (bad signature)" in verdict.problems


@pytest.mark.slow
def test_follow_up_commands_keep_a_run_verifiable(tmp_path: Path) -> None:
    """`bench.summarise --write`, `bench.screen` and `bench.report` into a finished run
    leave it verifiable; a changed record still fails it (docs/audit.md)."""
    out = tmp_path / "run"
    proc = run_cli("dataset=smoke", "arms=[raw,rag]", f"out={out}", "progress=false")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert not (out / "SUMMARY.md").exists()  # report=false: summarise --write adds it
    follow_ups = [
        (str(out), "--write", "bench.summarise"),
        (str(out), "--format", "comparable", "--write", "bench.summarise"),
        ("dataset=smoke", "arms=[rag]", f"out={out}", "bench.screen"),
        (str(out), "bench.report"),
    ]
    for *args, module in follow_ups:
        proc = run_cli(*args, module=module)
        assert proc.returncode == 0, (module, proc.stderr[-2000:])
    assert list((out / "screens").glob("rag-*.json")) and (out / "comparable.json").is_file()
    proc = run_cli(str(out), "--verbose", module="bench.verify")
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert "derived new SUMMARY.md (not checked)" in proc.stdout.splitlines()
    assert any(line.startswith("derived new screens/rag-") for line in proc.stdout.splitlines())
    record = sorted((out / "questions").glob("*.json"))[0]
    data = json.loads(record.read_text())
    data["arms"]["rag"]["answer"] = "forged"
    record.write_text(json.dumps(data))
    proc = run_cli(str(out), module="bench.verify")
    assert proc.returncode == 1
    assert proc.stdout.splitlines()[0] == f"changed questions/{record.name}"


def test_the_manifest_carries_the_verdict(run_copy: Path) -> None:
    """MANIFEST.json holds the publishable verdict, so signing the manifest signs it."""
    write_manifest(run_copy)
    manifest = json.loads((run_copy / MANIFEST).read_text())
    assert manifest["verdict"]["publishable"] is False
    codes = [r["code"] for r in manifest["verdict"]["reasons"]]
    assert codes[0] == "offline-answerer" and "too-few-questions" in codes
    assert main([str(run_copy)]) == 0
