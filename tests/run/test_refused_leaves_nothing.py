"""A command refused in one line leaves no run folder behind (bench/run/hydra_job.py).

Hydra makes `<out>/run.log` before the job runs, and a run takes `<out>/.lock` before it
checks its providers, so a refused command used to leave `results/<name>/` with nothing
but those two files in it.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from bench.run.hydra_job import drop_log_only_dir
from bench.run.lock import remove_unheld
from tests.support.e2e_support import run_cli


def test_a_missing_key_leaves_no_folder_and_an_old_folder_keeps_its_files(
    tmp_path: Path,
) -> None:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    old = tmp_path / "old"
    old.mkdir()
    (old / "notes.txt").write_text("mine")
    for out in (tmp_path / "new", old):
        proc = run_cli("dataset=smoke", "provider=openai", f"out={out}", env=env)
        assert proc.returncode == 2, proc.stderr[-500:]
        assert proc.stderr.startswith("error: environment variable OPENAI_API_KEY is not set")
    assert not (tmp_path / "new").exists()
    assert (old / "notes.txt").read_text() == "mine" and (old / ".lock").exists()


def test_a_held_lock_or_any_other_file_keeps_the_folder(tmp_path: Path) -> None:
    """Only job logs and run locks nobody holds are removed, and then the folder."""
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "run.log").write_text("")
    lock = folder / ".lock"
    lock.write_text("123\n")
    fd = os.open(lock, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)  # a shard beside the refused command
        assert remove_unheld([lock]) is False
        drop_log_only_dir(folder)
        assert sorted(p.name for p in folder.iterdir()) == [".lock", "run.log"]
    finally:
        os.close(fd)
    (folder / "questions").mkdir()  # a record's folder
    (folder / "odd name.log").write_text("")  # a name no job gives its log
    drop_log_only_dir(folder)
    assert (folder / "run.log").exists() and (folder / ".lock").exists()
    (folder / "questions").rmdir()
    (folder / "odd name.log").unlink()
    (folder / "link.log").symlink_to(tmp_path / "elsewhere.log")
    drop_log_only_dir(folder)
    assert (folder / "run.log").exists()  # a link is never followed to a delete
    (folder / "link.log").unlink()
    drop_log_only_dir(folder)
    assert not folder.exists()
