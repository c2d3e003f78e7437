"""Every case of issue 8's list ends in a correct result or one line with exit 2."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.e2e_support import ROOT, SMOKE_RAW_RAG, last_line, run_cli

SMOKE = ROOT / "datasets/fixtures/smoke_locomo.json"
NOBODY = 65534
SMOKE_RUN = SMOKE_RAW_RAG  # the shared smoke_raw_rag_run of tests/conftest.py
"""Two arms (one with a store) keep each run to a couple of seconds."""


@pytest.fixture
def base_run(smoke_raw_rag_run: Path) -> Path:
    """SMOKE_RUN, the session's shared run (tests/conftest.py): tests change only copies."""
    return smoke_raw_rag_run


@pytest.fixture
def sandbox() -> Iterator[Path]:
    """A folder an unprivileged user can reach (pytest's tmp is private to its owner)."""
    path = Path(tempfile.mkdtemp(prefix="armbench-ro-"))
    path.chmod(0o777)
    yield path
    for p in [path, *path.rglob("*")]:
        if not p.is_symlink():
            p.chmod(p.stat().st_mode | stat.S_IWUSR)
    shutil.rmtree(path)


def _copy(base_run: Path, dest: Path) -> Path:
    shutil.copytree(base_run, dest)
    return dest


def _first_record(run: Path) -> Path:
    return sorted((run / "questions").glob("*.json"))[0]


def _run_as_user(*overrides: str) -> subprocess.CompletedProcess[str]:
    """`python -m bench.run` as an unprivileged user (root ignores file permissions)."""
    prefix: list[str] = []
    if os.geteuid() == 0:
        if not shutil.which("setpriv"):
            pytest.skip("needs setpriv to drop root for a permission test")
        prefix = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    env = {**os.environ, "HOME": "/tmp", "PYTHONDONTWRITEBYTECODE": "1", "HYDRA_FULL_ERROR": "0"}
    return subprocess.run(
        [*prefix, sys.executable, "-m", "bench.run", *SMOKE_RUN, *overrides],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def _assert_one_line(proc: subprocess.CompletedProcess[str], *named: str) -> None:
    line = last_line(proc.stderr)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert line.startswith("error: ") and "Traceback" not in proc.stderr
    for text in named:
        assert text in line, line


@pytest.mark.parametrize(
    ("case", "edit"),
    [
        ("wrong shape", lambda d: {"schema_version": 1, "arms": []}),
        ("arm entry not an object", lambda d: {**d, "arms": {**d["arms"], "raw": 5}}),
        ("a list", lambda d: []),
    ],
)
def test_a_record_of_the_wrong_shape_is_one_line(
    base_run: Path, tmp_path: Path, case: str, edit: Any
) -> None:
    run = _copy(base_run, tmp_path / "run")
    record = _first_record(run)
    record.write_text(json.dumps(edit(json.loads(record.read_text()))))
    _assert_one_line(run_cli(*SMOKE_RUN, f"out={run}"), record.name, "move it away")


@pytest.mark.slow
@pytest.mark.parametrize("content", ['{"schema_version": 1, "ident', "[]", '{"dataset": "x"}'])
def test_a_damaged_run_json_is_checked_against_the_records(
    base_run: Path, tmp_path: Path, content: str
) -> None:
    run = _copy(base_run, tmp_path / "run")
    (run / "run.json").write_text(content)
    same = run_cli(*SMOKE_RUN, f"out={run}")
    assert same.returncode == 0 and "0 records written" in same.stderr, same.stderr[-2000:]
    (run / "run.json").write_text(content)
    changed = run_cli(*SMOKE_RUN, f"out={run}", "arm_options.rag.top_k=3")
    _assert_one_line(changed, "arm_options.rag", "run.json is missing, unreadable or foreign")


def test_a_deleted_run_json_does_not_disable_the_identity_check(
    base_run: Path, tmp_path: Path
) -> None:
    run = _copy(base_run, tmp_path / "run")
    (run / "run.json").unlink()
    proc = run_cli(*SMOKE_RUN, f"out={run}", "scoring.f1_threshold=0.7")
    _assert_one_line(proc, "scoring.f1_threshold")


def test_out_that_is_a_file_or_under_a_file_is_one_line(tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("x")
    _assert_one_line(run_cli("dataset=smoke", f"out={afile}"), "existing file")
    _assert_one_line(run_cli("dataset=smoke", f"out={afile}/sub"), "is a file")
    assert afile.read_text() == "x"


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs a /proc filesystem")
def test_out_where_nothing_can_be_created_is_one_line() -> None:
    """Issue 40, defect 11: /proc looks writable to root, yet Hydra's mkdir failed there."""
    proc = run_cli("dataset=smoke", "out=/proc/armbench-x/run", timeout=120)
    _assert_one_line(proc, "out=/proc/armbench-x/run: cannot create /proc/armbench-x (")
    assert "pass out= a writable place" in proc.stderr and proc.returncode == 2


@pytest.mark.parametrize("override", ["limit.questions=-1", "limit.conversations=0"])
def test_limits_must_be_positive(tmp_path: Path, override: str) -> None:
    proc = run_cli("dataset=smoke", f"out={tmp_path / 'run'}", override)
    _assert_one_line(proc, override.split("=")[0], "positive integer")
    assert not (tmp_path / "run" / "questions").exists()


def _mutated(tmp_path: Path, edit: Any, raw: bool = False) -> Path:
    text = SMOKE.read_text()
    path = tmp_path / "bad.json"
    if raw:
        path.write_text(edit(text))
    else:
        data = json.loads(text)
        edit(data)
        path.write_text(json.dumps(data))
    return path


def _no_sessions(d: Any) -> None:
    body = d[0]["conversation"]
    for key in [k for k in body if k.startswith("session_")]:
        body.pop(key)


def _surrogate(text: str) -> str:
    at = text.index('"text": "') + len('"text": "')
    return text[:at] + "\\ud800" + text[at:]


@pytest.mark.parametrize(
    ("edit", "raw", "named"),
    [
        (lambda d: d[0]["qa"][0].__setitem__("category", 9), False, "qa[0].category"),
        (_no_sessions, False, "conversations[0]: no sessions"),
        (lambda d: [c.__setitem__("qa", []) for c in d], False, "no questions"),
        (_surrogate, True, "session_1[0].text"),
    ],
)
def test_semantically_bad_datasets_are_refused_with_the_json_path(
    tmp_path: Path, edit: Any, raw: bool, named: str
) -> None:
    bad = _mutated(tmp_path, edit, raw)
    proc = run_cli("dataset=smoke", f"dataset.path={bad}", f"out={tmp_path / 'run'}")
    _assert_one_line(proc, "bad.json", named)
    assert not (tmp_path / "run" / "questions").exists()


def test_an_unknown_speaker_is_a_warning_not_an_error(tmp_path: Path) -> None:
    bad = _mutated(tmp_path, lambda d: d[0]["conversation"]["session_1"][0].update(speaker="Eve"))
    proc = run_cli("dataset=smoke", f"dataset.path={bad}", f"out={tmp_path / 'run'}", "arms=[raw]")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "['Eve'] are neither of" in proc.stdout + proc.stderr


def test_a_second_run_on_a_locked_out_names_the_holder(base_run: Path, tmp_path: Path) -> None:
    run = _copy(base_run, tmp_path / "run")
    before = {p.name: p.read_bytes() for p in run.glob("questions/*.json")}
    with open(run / ".lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fh.write(f"{os.getpid()}\n")
        fh.flush()
        proc = run_cli(*SMOKE_RUN, f"out={run}")
    _assert_one_line(proc, f"PID {os.getpid()}", "in use by another run")
    assert {p.name: p.read_bytes() for p in run.glob("questions/*.json")} == before


@pytest.mark.slow
def test_a_finished_run_in_a_read_only_folder_resumes_and_writes_nothing(sandbox: Path) -> None:
    run = sandbox / "run"  # made in place: a copy elsewhere would change `out` in run.json
    assert run_cli(*SMOKE_RUN, f"out={run}").returncode == 0
    (run / ".lock").unlink()  # no lock file either: nothing can be created there
    for p in [run, *run.rglob("*")]:
        p.chmod(p.stat().st_mode & ~0o222)
    run_json = (run / "run.json").read_bytes()
    proc = _run_as_user(f"out={run}")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "0 records written" in proc.stderr
    assert (run / "run.json").read_bytes() == run_json


def test_read_only_questions_fail_before_any_work(base_run: Path, sandbox: Path) -> None:
    run = _copy(base_run, sandbox / "run")
    record = _first_record(run)
    record.unlink()
    for p in [run, *run.rglob("*")]:
        os.chown(p, NOBODY, NOBODY) if os.geteuid() == 0 else None
    (run / "questions").chmod(0o555)
    proc = _run_as_user(f"out={run}")
    _assert_one_line(proc, "questions", "not writable")
    assert "ingest" not in proc.stderr.split("error:")[0].split("dataset smoke")[-1]


def test_report_into_a_read_only_folder_is_one_line(base_run: Path, sandbox: Path) -> None:
    run = _copy(base_run, sandbox / "run")
    for p in [run, *run.rglob("*")]:
        p.chmod(p.stat().st_mode & ~0o222)
    prefix = (
        ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
        if os.geteuid() == 0
        else []
    )
    proc = subprocess.run(
        [*prefix, sys.executable, "-m", "bench.report", str(run)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "HOME": "/tmp", "PYTHONDONTWRITEBYTECODE": "1"},
    )
    _assert_one_line(proc, "report.html")


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        ("limit.conversation=1", "did you mean 'conversations'?"),
        ("+limit.conversation=1", "did you mean 'conversations'?"),
        ("answr.max_tokens=3", "did you mean 'answer'?"),
        ("scoring.f1_treshold=0.3", "did you mean 'f1_threshold'?"),
    ],
)
def test_a_config_key_typo_is_one_line_with_a_did_you_mean(override: str, expected: str) -> None:
    proc = run_cli("dataset=smoke", override, "dry_run=true")
    line = last_line(proc.stderr)
    assert proc.returncode == 2 and line.startswith("error: unknown config key "), proc.stderr
    assert expected in line and "+" not in line.split("(a typo?)")[1]
    assert "full_key" not in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("how", ["searchpath", "config-dir"])
def test_a_users_own_config_folder_is_searched(tmp_path: Path, how: str) -> None:
    """A provider YAML outside the checkout, chosen by name (issue 41)."""
    (tmp_path / "mine" / "provider").mkdir(parents=True)
    own = (ROOT / "conf/provider/offline.yaml").read_text().replace("name: offline", "name: mine")
    (tmp_path / "mine" / "provider" / "mine.yaml").write_text(own)
    where = (
        [f"hydra.searchpath=[file://{tmp_path / 'mine'}]"]
        if how == "searchpath"
        else ["--config-dir", str(tmp_path / "mine")]
    )
    proc = run_cli(
        *where, "dataset=smoke", "provider=mine", "dry_run=true", f"out={tmp_path / 'run'}"
    )
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_a_value_of_the_wrong_type_names_its_key_first_without_omegaconfs_tail() -> None:
    proc = run_cli("dataset=smoke", "context_budgets=[256,abc]", "dry_run=true")
    line = last_line(proc.stderr)
    assert proc.returncode == 2, proc.stderr
    assert line.startswith("error: config: context_budgets[1]: Value 'abc'"), line
    assert "full_key" not in proc.stderr and "reference_type" not in proc.stderr


def test_the_board_without_a_run_is_one_line() -> None:
    import subprocess
    import sys

    from tests.support.e2e_support import ROOT

    proc = subprocess.run(
        [sys.executable, "-m", "bench.board"], cwd=ROOT, capture_output=True, text=True
    )
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith("error: the following arguments are required: RUN_DIR")


# ---- one tail: bench/cli_errors.py writes every `error:` line for a caught error ---------

TAIL_OWNER = Path("bench/cli_errors.py")
TAIL_LEFT: set[Path] = set()
"""Files still writing their own tail: none."""


def _own_tails(tree: Any) -> list[int]:
    """Lines of `except` handlers that print an `error:` line or end the command with 2."""
    import ast

    found = []
    for handler in (n for n in ast.walk(tree) if isinstance(n, ast.ExceptHandler)):
        for node in (n for stmt in handler.body for n in ast.walk(stmt)):
            if isinstance(node, ast.Return) and ast.unparse(node.value or ast.Constant(0)) == "2":
                found.append(handler.lineno)
                break
            if isinstance(node, ast.Call) and node.args:
                call, first = ast.unparse(node.func), ast.unparse(node.args[0])
                ends = call in ("sys.exit", "SystemExit", "exit") and first == "2"
                says = call == "print" and first.lstrip("f").strip("'\"").startswith("error:")
                if ends or says:
                    found.append(handler.lineno)
                    break
    return found


def test_no_main_writes_its_own_error_tail() -> None:
    """`except BenchError` / `except OSError` + `error:` + exit 2 lives in bench/cli_errors.py only.

    Each main uses `one_line_errors` (it returns the status) or `exit_on_errors` (a Hydra
    job): one message format, one exit status, one place to change them.
    """
    import ast

    offenders = [
        f"{path.relative_to(ROOT)}:{line}"
        for top in ("bench", "arms")
        for path in sorted((ROOT / top).rglob("*.py"))
        if path.relative_to(ROOT) not in {TAIL_OWNER, *TAIL_LEFT}
        for line in _own_tails(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert offenders == [], "use bench.cli_errors.one_line_errors / exit_on_errors"
    owner = _own_tails(ast.parse((ROOT / TAIL_OWNER).read_text(encoding="utf-8")))
    assert len(owner) == 2  # the scan sees a tail where there is one
