"""Hub datasets at a pinned revision and SHA-256, served from a Hub cache built here (offline)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from tests.e2e_support import ROOT, last_line, run_cli
from tests.test_settings import compose_run

FIXTURE = ROOT / "datasets" / "fixtures" / "smoke_longmemeval.json"
REPO = "xiaowu0162/longmemeval"
REVISION = "0123456789abcdef0123456789abcdef01234567"
SHA = hashlib.sha256(FIXTURE.read_bytes()).hexdigest()


def hub_cache(root: Path, name: str = "longmemeval_s") -> Path:
    """The Hub client's cache layout: datasets--<org>--<name>/{refs/main, snapshots/<rev>/}."""
    repo = root / f"datasets--{REPO.replace('/', '--')}"
    snapshot = repo / "snapshots" / REVISION
    snapshot.mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(REVISION)
    shutil.copy(FIXTURE, snapshot / name)
    return snapshot / name


def offline_env(tmp_path: Path) -> dict[str, str]:
    """No local copy anywhere, the Hub cache under tmp_path, HF_HUB_OFFLINE=1."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "BENCH_"))}
    (tmp_path / "empty").mkdir(exist_ok=True)
    return env | {
        "HF_HUB_CACHE": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1",
        "BENCH_DATA_DIR": str(tmp_path / "empty"), "BENCH_CACHE_DIR": str(tmp_path / "cache"),
    }  # fmt: skip


def pinned(*extra: str) -> list[str]:
    return [f"dataset.hf_revision={REVISION}", f"dataset.sha256={SHA}", *extra]


def test_variant_picks_the_file_and_a_typo_is_refused() -> None:
    cfg = compose_run("dataset=longmemeval", "dataset.variant=oracle").dataset
    assert (cfg.filename, cfg.hf_split) == ("longmemeval_oracle.json", "longmemeval_oracle")
    assert compose_run("dataset=longmemeval").dataset.hf_split == "longmemeval_s"


@pytest.mark.slow
def test_pinned_hub_cache_serves_longmemeval_s_and_run_json_records_the_pin(
    tmp_path: Path,
) -> None:
    served = hub_cache(tmp_path / "hf")
    out = tmp_path / "run"
    proc = run_cli("dataset=longmemeval", "dataset.variant=s", *pinned(), "arms=[raw]",
                   f"out={out}", "progress=false", env=offline_env(tmp_path))  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    dataset = json.loads((out / "run.json").read_text())["dataset"]
    assert dataset["hf_repo"] == REPO and dataset["hf_revision"] == REVISION
    assert dataset["sha256"] == SHA and Path(dataset["path"]) == served
    assert not (tmp_path / "cache").exists()  # read from the Hub cache, not copied


def test_a_changed_file_in_the_hub_cache_is_refused(tmp_path: Path) -> None:
    served = hub_cache(tmp_path / "hf")
    served.write_bytes(served.read_bytes() + b"\n")  # still valid JSON, other bytes
    proc = run_cli("dataset=longmemeval", *pinned(), "arms=[raw]", f"out={tmp_path / 'run'}",
                   env=offline_env(tmp_path))  # fmt: skip
    assert proc.returncode == 2
    line = last_line(proc.stderr)
    assert line.startswith(f"error: {served}: SHA-256 mismatch (Hub {REPO}@{REVISION[:12]})")
    assert f"expected {SHA}" in line and not (tmp_path / "run" / "questions").exists()


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ([], "a Hub fetch needs a pinned commit and SHA-256 and armbench records none verified"),
        ([f"dataset.sha256={SHA}", "dataset.hf_revision=main"], "dataset.hf_revision=main"),
        (pinned("dataset.variant=m"), "longmemeval_m of the Hub dataset"),
        (["dataset.variant=sm"], "dataset.variant=sm: not a longmemeval variant"),
    ],
)
def test_unpinned_uncached_or_unknown_is_one_line(
    tmp_path: Path, overrides: list[str], expected: str
) -> None:
    hub_cache(tmp_path / "hf")  # holds longmemeval_s only
    proc = run_cli("dataset=longmemeval", *overrides, "arms=[raw]", f"out={tmp_path / 'run'}",
                   env=offline_env(tmp_path))  # fmt: skip
    assert proc.returncode == 2, proc.stderr[-2000:]
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and expected in errors[0], proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
