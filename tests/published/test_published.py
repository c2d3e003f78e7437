"""bench.published: import of the shared published files, identity checks, the guard
against re-answering or re-judging imports, pairing counts, merge and export round trips."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import jsonschema
import pytest

from bench.answer.answer_step import AnswerStep
from bench.judge.judges import needs_judgement
from bench.paths import PROJECT_ROOT
from bench.records import OK, ArmResult, Judgement, QuestionRecord, iter_records, read_record
from bench.run.arms_pending import arms_to_run
from bench.run.resume import JudgeKey
from bench.summarise import load_run, summarise_records
from bench.verify.record_schema import build_schema

DATA = Path(os.environ.get("BENCH_DATA_DIR", "/nonexistent"))
AUDIT = DATA / "locomo-audit"
COT = AUDIT / "fc-gpt-4o-mini-cot.json"
LME = DATA / "longmemeval-s-subset16.json"
OFFLINE = PROJECT_ROOT / "results" / "locomo-offline-v0.3.0"
needs_data = pytest.mark.skipif(
    not (COT.is_file() and (DATA / "locomo10.json").is_file()),
    reason="the shared published files and LoCoMo are not in $BENCH_DATA_DIR",
)


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """`python -m bench.published ARGS` as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "bench.published", *args],
        cwd=PROJECT_ROOT,
        env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT), "BENCH_DATA_DIR": str(DATA)},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """fc-gpt-4o-mini-cot.json imported once for the module."""
    if not COT.is_file():
        pytest.skip("published files not in $BENCH_DATA_DIR")
    out = tmp_path_factory.mktemp("imp") / "fc-cot"
    proc = run_cli(str(COT), "--format", "evermemos", "--out", str(out), "--arm", "fc-cot")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == (
        f"imported 1540 rows of fc-gpt-4o-mini-cot.json as arm fc-cot (3 judge runs) into "
        f"{out}; not in the file: 446 dataset questions (category 5: 446)"
    )
    yield out


@needs_data
def test_import_reproduces_the_files_own_metadata(imported: Path) -> None:
    """Per-run, mean, population SD, majority and per-category figures equal the metadata."""
    meta = json.loads(COT.read_text(encoding="utf-8"))["metadata"]
    assert statistics.pstdev(meta["run_scores"]) == pytest.approx(meta["std_accuracy"], abs=1e-15)
    assert statistics.stdev(meta["run_scores"]) != pytest.approx(meta["std_accuracy"], rel=1e-6)
    summary = summarise_records(load_run(imported))
    (view,) = summary.judge_runs
    assert (view.arm, view.base) == ("fc-cot", "published:gpt-4o-mini")
    assert view.overall.n == 1540
    assert view.overall.per_run == pytest.approx(meta["run_scores"], abs=1e-12)
    assert view.overall.mean == pytest.approx(meta["mean_accuracy"], abs=1e-12)
    assert view.overall.sd == pytest.approx(meta["std_accuracy"], abs=1e-12)
    assert view.overall.majority == pytest.approx(meta["majority_vote_accuracy"], abs=1e-12)
    for key, published in meta["category_accuracies"].items():
        got = view.groups[key]
        assert got.n == published["total"]
        assert got.per_run == pytest.approx(published["individual_runs"], abs=1e-12)
        assert got.mean == pytest.approx(published["mean"], abs=1e-12)
        assert got.sd == pytest.approx(published["std"], abs=1e-12)


@needs_data
def test_summary_prints_the_published_figures(imported: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "bench.summarise", str(imported)],
        cwd=PROJECT_ROOT,
        env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    row = next(ln for ln in proc.stdout.splitlines() if "| fc-cot | published:" in ln)
    assert "| 79.89% ± 0.12 | 79.94% |" in row
    cats = {ln.split("|")[3].strip(): ln for ln in proc.stdout.splitlines() if "#1..#3" in ln}
    for label, mean in (
        ("1 multi-hop", "82.62%"),
        ("2 temporal", "57.32%"),
        ("3 open-domain", "66.67%"),
        ("4 single-hop", "89.10%"),
    ):
        assert f"| {mean} ±" in cats[label]


@needs_data
def test_records_are_identified_valid_and_marked(imported: Path) -> None:
    """Row locomo_<i>_qa<j> is question j of conversation i, checked against the data."""
    locomo = json.loads((DATA / "locomo10.json").read_text(encoding="utf-8"))
    rows = json.loads(COT.read_text(encoding="utf-8"))["detailed_results"]
    by_row = {r.arms["fc-cot"].imported.row: r for r in iter_records(imported)}  # type: ignore[union-attr]
    schema = build_schema()
    assert len(by_row) == 1540
    for items in rows.values():
        for item in items[::50]:
            i, j = (int(x) for x in item["question_id"][len("locomo_") :].split("_qa"))
            record = by_row[item["question_id"]]
            assert record.question_id == f"{locomo[i]['sample_id']}:{j}"
            assert record.question == locomo[i]["qa"][j]["question"] == item["question"]
            result = record.arms["fc-cot"]
            assert result.answer == item["generated_answer"]
            verdicts = [result.judgements[f"published:gpt-4o-mini#{k}"].verdict for k in (1, 2, 3)]
            assert verdicts == [item["llm_judgments"][f"judgment_{k}"] for k in (1, 2, 3)]
            assert result.correct is (sum(verdicts) >= 2)
            assert result.imported is not None and result.imported.format == "evermemos"
            jsonschema.validate(record.to_json(), schema)
    assert not any(p.name.startswith(".") for p in imported.parent.iterdir())
    assert run_cli("--help").returncode == 0


def _edited(tmp_path: Path, edit: Any) -> Path:
    data = json.loads(COT.read_text(encoding="utf-8"))
    edit(data["detailed_results"])
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _set(key: str, n: int, field: str, value: Any) -> Any:
    return lambda d: d[key][n].__setitem__(field, value)


@needs_data
@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (_set("locomo_exp_user_0", 3, "question", "Who?"), "(locomo_0_qa3) asks 'Who?'"),
        (_set("locomo_exp_user_1", 0, "category", "5"), "has category 5"),
        (_set("locomo_exp_user_0", 1, "question_id", "locomo_0_qa0"), "one row per question"),
        (_set("locomo_exp_user_2", 0, "question_id", "locomo_2_qa9999"), "names no question"),
        (_set("locomo_exp_user_2", 0, "question_id", "locomo_3_qa1"), "is not locomo_2_qa<j>"),
        (_set("locomo_exp_user_0", 0, "llm_judgments", {"judgment_1": "yes"}), "not true or false"),
        (lambda d: d["locomo_exp_user_0"][5]["llm_judgments"].pop("judgment_3"), "same judge runs"),
    ],
)
def test_bad_rows_are_one_error_line_and_nothing_written(
    tmp_path: Path, edit: Any, expected: str
) -> None:
    path = _edited(tmp_path, edit)
    out = tmp_path / "runs" / "x"
    proc = run_cli(str(path), "--format", "evermemos", "--out", str(out), "--arm", "x")
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1, proc.stderr
    assert expected in proc.stderr
    assert not out.exists()
    assert not (tmp_path / "runs").exists() or not list((tmp_path / "runs").iterdir())


@needs_data
def test_another_gold_is_said_not_refused(tmp_path: Path) -> None:
    path = _edited(tmp_path, _set("locomo_exp_user_4", 2, "golden_answer", "something else"))
    out = tmp_path / "o"
    proc = run_cli(str(path), "--format", "evermemos", "--out", str(out), "--arm", "x")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("\n") == 1
    assert "; 1 rows give a golden_answer other than the dataset's gold" in proc.stdout
    blank = run_cli(str(path), "--format", "evermemos", "--out", str(tmp_path / "b"), "--arm", " ")
    assert blank.returncode == 2 and blank.stderr.startswith("error: --arm")


@needs_data
@pytest.mark.parametrize("fmt", ["nmafc", "zep"])
def test_formats_without_a_verified_example_are_refused(tmp_path: Path, fmt: str) -> None:
    proc = run_cli(str(COT), "--format", fmt, "--out", str(tmp_path / "o"), "--arm", "x")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "not supported yet" in proc.stderr and "no verified upstream example" in proc.stderr
    assert not (tmp_path / "o").exists()


@needs_data
def test_existing_out_is_refused(imported: Path) -> None:
    before = sorted(p.name for p in (imported / "questions").iterdir())
    proc = run_cli(str(COT), "--format", "evermemos", "--out", str(imported), "--arm", "x")
    assert proc.returncode == 2 and "already exists" in proc.stderr
    assert sorted(p.name for p in (imported / "questions").iterdir()) == before


def _imported_result() -> ArmResult:
    from bench.records import Imported

    return ArmResult(
        status=OK,
        answer="a",
        correct=True,
        judgements={"published:m#1": Judgement("published:m#1", OK, True, model="m")},
        imported=Imported(format="evermemos", file_sha256="0" * 64, file_name="f", row="r"),
    )


def test_imported_results_are_never_answered_or_judged_again() -> None:
    """The resume rule, the judging rule and the judge step all leave imports alone."""
    result = _imported_result()
    record = QuestionRecord("q:0", "locomo", "q", 1, "?", "g", [], {"pub": result})
    judges = (JudgeKey("j", "model", "hash"),)
    assert arms_to_run(record, ["pub"], judges, rejudge=True) == ([], [])
    assert not needs_judgement(result, judges[0], rejudge=True)  # type: ignore[arg-type]
    step = SimpleNamespace(judges=judges)  # a judge that would be asked, were it allowed
    assert AnswerStep.judge(step, None, result, rejudge=True) is result  # type: ignore[arg-type]
    own = ArmResult(status=OK, answer="a", correct=True)
    assert arms_to_run(
        QuestionRecord("q:0", "l", "q", 1, "?", "g", [], {"x": own}), ["x"], judges, rejudge=True
    ) == ([], ["x"])


def test_committed_records_read_and_write_back_byte_identical() -> None:
    for path in sorted((OFFLINE / "questions").glob("*.json"))[:40]:
        text = path.read_text(encoding="utf-8")
        again = json.dumps(read_record(path).to_json(), ensure_ascii=False, indent=1) + "\n"
        assert again == text, path


@needs_data
def test_pairing_the_offline_run_with_the_import_counts_as_computed_here(imported: Path) -> None:
    """McNemar cells of every arm vs the import, computed from the raw files independently."""
    majority = {}
    locomo = json.loads((DATA / "locomo10.json").read_text(encoding="utf-8"))
    for items in json.loads(COT.read_text(encoding="utf-8"))["detailed_results"].values():
        for item in items:
            i, j = (int(x) for x in item["question_id"][len("locomo_") :].split("_qa"))
            majority[f"{locomo[i]['sample_id']}:{j}"] = sum(item["llm_judgments"].values()) >= 2
    ours: dict[str, dict[str, bool]] = {}
    for path in (OFFLINE / "questions").glob("*.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        for arm, res in data["arms"].items():
            ours.setdefault(arm, {})[data["question_id"]] = res["correct"]
    summary = summarise_records(load_run(OFFLINE), baseline=load_run(imported))
    assert summary.baseline_arm == "fc-cot"
    rows = {r.b: r for r in summary.baseline or [] if r.set == "scored"}
    assert sorted(rows) == sorted(ours)
    for arm, outcome in ours.items():
        shared = [q for q in majority if q in outcome]
        lost = sum(majority[q] and not outcome[q] for q in shared)
        gained = sum(outcome[q] and not majority[q] for q in shared)
        test = rows[arm].pooled
        assert (test.n, test.a_only, test.b_only) == (1540, lost, gained)
        assert test.both == sum(majority[q] and outcome[q] for q in shared)
    audit = json.loads((DATA / "locomo-audit-errors.json").read_text(encoding="utf-8"))
    changed = set()
    for entry in audit:
        if entry["error_type"] != "WRONG_CITATION":
            i, j = (int(x) for x in entry["question_id"][len("locomo_") :].split("_qa"))
            changed.add(f"{locomo[i]['sample_id']}:{j}")
    clean = {r.b: r.pooled for r in summary.baseline or [] if r.set.startswith("scored, key")}
    for arm, outcome in ours.items():
        kept = [q for q in majority if q in outcome and q not in changed]
        lost = sum(majority[q] and not outcome[q] for q in kept)
        gained = sum(outcome[q] and not majority[q] for q in kept)
        assert (clean[arm].n, clean[arm].a_only, clean[arm].b_only) == (1441, lost, gained)


@needs_data
def test_baseline_arm_flag_and_its_error(
    imported: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bench.summarise.cli import main as summarise

    assert summarise([str(OFFLINE), "--baseline", str(imported), "--baseline-arm", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --baseline-arm nope") and err.count("\n") == 1
    assert summarise([str(OFFLINE), "--baseline", str(imported), "--margin", "0"]) == 2


@needs_data
def test_export_reimports_to_the_same_records(imported: Path, tmp_path: Path) -> None:
    out = tmp_path / "export.json"
    proc = run_cli(
        "export", str(imported), "--format", "evermemos", "--arm", "fc-cot", "--out", str(out)
    )
    assert proc.returncode == 0, proc.stderr
    again = tmp_path / "again"
    proc = run_cli(str(out), "--format", "evermemos", "--out", str(again), "--arm", "fc-cot")
    assert proc.returncode == 0, proc.stderr

    def key(run: Path) -> list[tuple[Any, ...]]:
        return [
            (
                r.question_id,
                r.arms["fc-cot"].answer,
                r.arms["fc-cot"].correct,
                {k: j.verdict for k, j in r.arms["fc-cot"].judgements.items()},
            )
            for r in iter_records(run)
        ]

    assert key(again) == key(imported)


@pytest.mark.slow
@needs_data
def test_merge_puts_the_import_beside_the_runs_arms(imported: Path, tmp_path: Path) -> None:
    out = tmp_path / "merged"
    proc = run_cli("merge", str(OFFLINE), str(imported), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    records = iter_records(out)
    assert len(records) == 1986
    assert sum("fc-cot" in r.arms for r in records) == 1540
    assert json.loads((out / "run.json").read_text())["arms"][-1] == "fc-cot"
    assert (out / "MANIFEST.json").is_file()
    again = run_cli("merge", str(out), str(imported), "--out", str(tmp_path / "twice"))
    assert again.returncode == 2 and "already has an arm fc-cot" in again.stderr
    assert not (tmp_path / "twice").exists()


def _lme_files(tmp_path: Path) -> tuple[Path, list[Path]]:
    """Hypotheses and three verdict logs written as LongMemEval's evaluate_qa.py writes them."""
    items = json.loads(LME.read_text(encoding="utf-8"))
    hyps = [
        {"question_id": x["question_id"], "hypothesis": f"guess {n}"} for n, x in enumerate(items)
    ]
    path = tmp_path / "hyp.jsonl"
    path.write_text("".join(json.dumps(h) + "\n" for h in hyps), encoding="utf-8")
    logs = []
    for k in (1, 2, 3):
        log = tmp_path / f"log{k}.jsonl"
        entries = [
            {**h, "autoeval_label": {"model": "gpt-4o-2024-08-06", "label": (n * k) % 3 == 0}}
            for n, h in enumerate(hyps)
        ]
        log.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
        logs.append(log)
    return path, logs


@pytest.mark.skipif(not LME.is_file(), reason="LongMemEval subset not in $BENCH_DATA_DIR")
def test_longmemeval_import_majority_and_export_round_trip(tmp_path: Path) -> None:
    hyp, logs = _lme_files(tmp_path)
    out = tmp_path / "lme"
    args = ["--format", "longmemeval", "--out", str(out), "--arm", "sys", "--dataset", str(LME)]
    proc = run_cli(str(hyp), *args, *(x for log in logs for x in ("--judgements", str(log))))
    assert proc.returncode == 0, proc.stderr
    assert "imported 16 rows of hyp.jsonl as arm sys (3 judge runs)" in proc.stdout
    for record in iter_records(out):
        result = record.arms["sys"]
        k = int((result.answer or "").split()[1])
        labels = [(k * run) % 3 == 0 for run in (1, 2, 3)]
        assert [
            result.judgements[f"published:gpt-4o-2024-08-06#{r}"].verdict for r in (1, 2, 3)
        ] == labels
        assert result.correct is (sum(labels) >= 2)
    exported = tmp_path / "out.jsonl"
    assert (
        run_cli(
            "export", str(out), "--format", "longmemeval", "--arm", "sys", "--out", str(exported)
        ).returncode
        == 0
    )
    again = tmp_path / "again"
    assert run_cli(str(exported), *args[:2], "--out", str(again), *args[4:]).returncode == 0
    before = {r.question_id: r.arms["sys"].answer for r in iter_records(out)}
    assert {r.question_id: r.arms["sys"].answer for r in iter_records(again)} == before


@pytest.mark.skipif(not LME.is_file(), reason="LongMemEval subset not in $BENCH_DATA_DIR")
def test_longmemeval_log_of_other_hypotheses_is_refused(tmp_path: Path) -> None:
    hyp, logs = _lme_files(tmp_path)
    text = logs[0].read_text(encoding="utf-8").replace("guess 3", "guess three")
    logs[0].write_text(text, encoding="utf-8")
    out = tmp_path / "lme"
    proc = run_cli(
        str(hyp),
        "--format",
        "longmemeval",
        "--out",
        str(out),
        "--arm",
        "s",
        "--dataset",
        str(LME),
        "--judgements",
        str(logs[0]),
    )
    assert proc.returncode == 2 and "judged another hypothesis" in proc.stderr
    assert proc.stderr.count("\n") == 1 and not out.exists()


@pytest.mark.slow
@needs_data
def test_an_f1_scored_arm_exported_and_reimported_keeps_its_outcomes(tmp_path: Path) -> None:
    """The offline raw arm (f1>=0.5) through export and import: every outcome and F1 kept."""
    out = tmp_path / "raw.json"
    proc = run_cli(
        "export",
        str(OFFLINE),
        "--format",
        "evermemos",
        "--arm",
        "raw",
        "--out",
        str(out),
        "--dataset",
        str(DATA / "locomo10.json"),
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out.read_text())["metadata"]["outcome"] == "f1>=0.5"
    again = tmp_path / "again"
    proc = run_cli(
        str(out),
        "--format",
        "evermemos",
        "--out",
        str(again),
        "--arm",
        "raw",
        "--dataset",
        str(DATA / "locomo10.json"),
    )
    assert proc.returncode == 0, proc.stderr
    before = {r.question_id: r.arms["raw"] for r in iter_records(OFFLINE)}
    after = iter_records(again)
    assert len(after) == 1540
    for record in after:
        res, old = record.arms["raw"], before[record.question_id]
        assert (res.correct, res.outcome, res.scores["f1"]) == (
            old.correct,
            "f1>=0.5",
            old.scores["f1"],
        ), record.question_id


@needs_data
def test_imported_arms_get_the_f1_column(imported: Path) -> None:
    """Gold and answer are both there: the import scores the answer's official F1."""
    records = iter_records(imported)
    assert all(isinstance(r.arms["fc-cot"].scores.get("f1"), float) for r in records)
    summary = summarise_records(load_run(imported))
    assert summary.arms["fc-cot"].f1["scored"] is not None


@pytest.mark.skipif(not LME.is_file(), reason="LongMemEval subset not in $BENCH_DATA_DIR")
@pytest.mark.parametrize("link", [False, True])
def test_a_longmemeval_log_passed_twice_is_refused(tmp_path: Path, link: bool) -> None:
    """Issue 40, item 12: the same verdict log twice counted as two judge runs."""
    hyp, logs = _lme_files(tmp_path)
    twice = tmp_path / "link.jsonl" if link else logs[0]
    if link:
        twice.symlink_to(logs[0])
    out = tmp_path / "lme"
    proc = run_cli(
        str(hyp),
        "--format",
        "longmemeval",
        "--out",
        str(out),
        "--arm",
        "s",
        "--dataset",
        str(LME),
        "--judgements",
        str(logs[0]),
        "--judgements",
        str(twice),
    )
    assert proc.returncode == 2, proc.stdout
    assert proc.stderr == (
        f"error: --judgements {twice}: the same file as {logs[0]}: one judge run counts once; "
        "pass each run's log once\n"
    )
    assert not out.exists()


@pytest.mark.slow
@needs_data
def test_a_sigkilled_import_leaves_a_folder_the_next_import_removes(tmp_path: Path) -> None:
    """Issue 40, item 12: a killed import's `.importing` folder stayed for ever."""
    import signal
    import time

    out = tmp_path / "fc-cot"
    argv = [
        sys.executable,
        "-m",
        "bench.published",
        str(COT),
        "--format",
        "evermemos",
        "--out",
        str(out),
        "--arm",
        "fc-cot",
    ]
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT), "BENCH_DATA_DIR": str(DATA)}
    proc = subprocess.Popen(argv, cwd=PROJECT_ROOT, env=env, stderr=subprocess.DEVNULL)
    while proc.poll() is None and not list(tmp_path.glob(".fc-cot.*.importing")):
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    left = list(tmp_path.glob(".fc-cot.*.importing"))
    if not left:
        pytest.skip("the import finished before it could be killed")
    again = run_cli(*argv[3:])
    assert again.returncode == 0, again.stderr
    assert not list(tmp_path.glob(".fc-cot.*.importing")) and out.is_dir()
