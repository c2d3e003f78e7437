"""Hub datasets at a pinned revision, checksum on first use, served from a Hub cache built here.

No network: each test lays out the Hub client's cache (`datasets--<org>--<name>/snapshots/
<revision>/<file>`) under tmp_path and runs with `HF_HUB_OFFLINE=1`.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from tests.run.test_settings import compose_run
from tests.support.e2e_support import ROOT, last_line, run_cli

FIXTURE = ROOT / "datasets" / "fixtures" / "smoke_longmemeval.json"
SHA = hashlib.sha256(FIXTURE.read_bytes()).hexdigest()
SHIPPED = compose_run("dataset=longmemeval").dataset
REPO, REVISION = "xiaowu0162/longmemeval-cleaned", "98d7416c24c778c2fee6e6f3006e7a073259d48f"
NOTE = "not verified against a published value"


def hub_cache(root: Path, name: str, repo: str = REPO, revision: str = REVISION) -> Path:
    """The Hub client's cache layout: datasets--<org>--<name>/{refs/main, snapshots/<rev>/}."""
    folder = root / f"datasets--{repo.replace('/', '--')}"
    snapshot = folder / "snapshots" / revision
    snapshot.mkdir(parents=True)
    (folder / "refs").mkdir(exist_ok=True)
    (folder / "refs" / "main").write_text(revision)
    shutil.copy(FIXTURE, snapshot / name)
    return snapshot / name


def offline_env(tmp_path: Path) -> dict[str, str]:
    """No local copy anywhere, the Hub cache under tmp_path, HF_HUB_OFFLINE=1."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "BENCH_"))}
    (tmp_path / "empty").mkdir(exist_ok=True)
    return env | {
        "HF_HUB_CACHE": str(tmp_path / "hf"),
        "HF_HUB_OFFLINE": "1",
        "BENCH_DATA_DIR": str(tmp_path / "empty"),
        "BENCH_CACHE_DIR": str(tmp_path / "cache"),
    }


def test_the_shipped_pin_and_the_variant_files() -> None:
    from bench.loaders.hub import hub_file_name

    assert (SHIPPED.hf_repo, SHIPPED.hf_revision, SHIPPED.sha256) == (REPO, REVISION, None)
    files = {}
    for variant in ("s", "m", "oracle"):
        cfg = compose_run("dataset=longmemeval", f"dataset.variant={variant}").dataset
        files[variant] = (cfg.filename, hub_file_name(cfg.loader, cfg.variant, None, ""))
    assert files == {
        "s": ("longmemeval_s.json", "longmemeval_s_cleaned.json"),
        "m": ("longmemeval_m.json", "longmemeval_m_cleaned.json"),
        "oracle": ("longmemeval_oracle.json", "longmemeval_oracle.json"),
    }
    beam = compose_run("dataset=beam").dataset
    assert (beam.hf_repo, beam.hf_revision) == (
        "Mohammadta/BEAM",
        "3205395e897e7318c7b094ef4e6047b9b82dbb03",
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("repo", "overrides"),
    [
        (REPO, ["dataset.variant=s"]),  # out of the box: the shipped pin, no SHA-256
        # the original default, named explicitly as before (same trust on first use)
        ("xiaowu0162/longmemeval",
         ["dataset.hf_repo=xiaowu0162/longmemeval", "dataset.hf_split=longmemeval_s",
          f"dataset.hf_revision={'ab' * 20}"]),
    ],
)  # fmt: skip
def test_unpinned_checksum_is_recorded_with_one_note(
    tmp_path: Path, repo: str, overrides: list[str]
) -> None:
    revision = REVISION if repo == REPO else "ab" * 20
    name = "longmemeval_s_cleaned.json" if repo == REPO else "longmemeval_s"
    served = hub_cache(tmp_path / "hf", name, repo, revision)
    out = tmp_path / "run"
    proc = run_cli(
        "dataset=longmemeval",
        *overrides,
        "arms=[raw]",
        f"out={out}",
        "progress=false",
        env=offline_env(tmp_path),
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    notes = [line for line in (proc.stdout + proc.stderr).splitlines() if NOTE in line]
    assert len(notes) == 1 and notes[0].endswith(f"pin it with dataset.sha256={SHA}"), notes
    dataset = json.loads((out / "run.json").read_text())["dataset"]
    assert dataset == dataset | {
        "hf_repo": repo,
        "hf_revision": revision,
        "hf_file": name,
        "sha256": SHA,
        "hf_sha256_verified": False,
        "path": str(served),
    }
    assert not (tmp_path / "cache").exists()  # read from the Hub cache, not copied


@pytest.mark.slow
def test_a_pinned_checksum_is_verified_and_recorded(tmp_path: Path) -> None:
    hub_cache(tmp_path / "hf", "longmemeval_s_cleaned.json")
    out = tmp_path / "run"
    proc = run_cli(
        "dataset=longmemeval",
        f"dataset.sha256={SHA}",
        "arms=[raw]",
        f"out={out}",
        "progress=false",
        env=offline_env(tmp_path),
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert NOTE not in proc.stdout + proc.stderr
    dataset = json.loads((out / "run.json").read_text())["dataset"]
    assert (dataset["sha256"], dataset["hf_sha256_verified"]) == (SHA, True)


def test_a_changed_file_in_the_hub_cache_is_refused(tmp_path: Path) -> None:
    served = hub_cache(tmp_path / "hf", "longmemeval_s_cleaned.json")
    served.write_bytes(served.read_bytes() + b"\n")  # still valid JSON, other bytes
    proc = run_cli(
        "dataset=longmemeval",
        f"dataset.sha256={SHA}",
        "arms=[raw]",
        f"out={tmp_path / 'run'}",
        env=offline_env(tmp_path),
    )
    assert proc.returncode == 2
    line = last_line(proc.stderr)
    assert line.startswith(f"error: {served}: SHA-256 mismatch (Hub {REPO}@{REVISION[:12]})")
    assert f"expected {SHA}" in line and not (tmp_path / "run" / "questions").exists()


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        (["dataset.hf_revision=main"], "dataset.hf_revision=main: a Hub fetch of"),
        (["dataset.hf_revision=null"], "needs a commit of 40 hex digits"),
        (["dataset.variant=m"], "longmemeval_m_cleaned.json of the Hub dataset"),
        (["dataset.variant=sm"], "dataset.variant=sm: not a longmemeval variant"),
    ],
)
def test_unpinned_uncached_or_unknown_is_one_line(
    tmp_path: Path, overrides: list[str], expected: str
) -> None:
    hub_cache(tmp_path / "hf", "longmemeval_s_cleaned.json")  # holds the s variant only
    proc = run_cli(
        "dataset=longmemeval",
        *overrides,
        "arms=[raw]",
        f"out={tmp_path / 'run'}",
        env=offline_env(tmp_path),
    )
    assert proc.returncode == 2, proc.stderr[-2000:]
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and expected in errors[0], proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
