"""`python -m bench.run -m ...` gives every job its own run directory."""

from __future__ import annotations

from pathlib import Path

from tests.e2e_support import load_records, run_cli


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
