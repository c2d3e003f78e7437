"""`python -m bench.run -m ...` gives every job its own run directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.e2e_support import load_records, run_cli


@pytest.mark.slow
def test_run_multirun_jobs_get_their_own_directories(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    proc = run_cli(
        "-m",
        "dataset=smoke",
        "arms=[rag]",
        "arm_options.rag.top_k=1,2",
        "limit.conversations=1",
        "limit.questions=2",
        f"out={out}",
        "progress=false",
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    jobs = sorted(p for p in out.iterdir() if (p / "run.json").is_file())
    assert [j.name.split(",")[0] for j in jobs] == [
        "arm_options.rag.top_k=1",
        "arm_options.rag.top_k=2",
    ]
    records = [load_records(j) for j in jobs]
    assert all(len(r) == 2 for r in records)
    assert records[0].keys() == records[1].keys()  # same questions: the jobs pair
    assert not (out / "questions").exists()  # nothing written to the shared out itself


@pytest.mark.slow
def test_run_sweep_over_retrieval_knobs_reuses_one_ingestion(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    common = ("dataset=smoke", "arms=[rag]", "limit.conversations=1", "limit.questions=2")
    first = run_cli("-m", *common, "arm_options.rag.top_k=1", f"out={out}", "progress=false")
    assert first.returncode == 0, first.stderr[-2000:]
    (store,) = (out / "stores").iterdir()  # keyed by the arm's fingerprint
    assert store.name.startswith("rag-")
    files = {p: p.stat().st_mtime_ns for p in store.rglob("*") if p.is_file()}
    assert any(p.name.endswith(".json") for p in files)  # the ingestion checkpoint
    second = run_cli("-m", *common, "arm_options.rag.top_k=2", f"out={out}", "progress=false")
    assert second.returncode == 0, second.stderr[-2000:]
    jobs = sorted(p for p in out.iterdir() if (p / "run.json").is_file())
    assert len(jobs) == 2 and all(len(load_records(j)) == 2 for j in jobs)
    assert not any((j / "stores").exists() for j in jobs)
    # the second job reopened the store: no file rewritten, none added
    assert {p: p.stat().st_mtime_ns for p in store.rglob("*") if p.is_file()} == files
    assert [p.name for p in (out / "stores").iterdir()] == [store.name]
    # an ingestion knob changes the fingerprint: its own store, the first one untouched
    third = run_cli("-m", *common, "arm_options.rag.window=3", f"out={out}", "progress=false")
    assert third.returncode == 0, third.stderr[-2000:]
    assert len(list((out / "stores").iterdir())) == 2
    assert {p: p.stat().st_mtime_ns for p in store.rglob("*") if p.is_file()} == files


@pytest.mark.slow
def test_sweep_job_folders_need_no_shell_quoting(tmp_path: Path) -> None:
    """`arms=[raw],[raw,rag]` made folders `arms=[raw,rag],...`: a glob in zsh (issue 41)."""
    import shlex

    from bench.run.hydra_job import shell_safe

    assert shell_safe("arms=[raw,rag],dataset.path=/a b/c.json") == (
        "arms=_raw,rag_,dataset.path=_a_b_c.json"
    )
    out = tmp_path / "sweep"
    proc = run_cli(
        "-m",
        "dataset=smoke",
        "arms=[raw],[raw,rag]",
        "limit.conversations=1",
        "limit.questions=1",
        f"out={out}",
        "progress=false",
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    jobs = sorted(p.name for p in out.iterdir() if p.name.startswith("arms="))
    assert len(jobs) == 2 and all(shlex.quote(job) == job for job in jobs)
