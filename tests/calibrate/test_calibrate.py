"""`python -m bench.calibrate`: answer sets of known truth, counts, intervals, outputs, errors."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from bench.calibrate.cli import Options, _run_config, calibrate_config, main
from bench.calibrate.evermemos import read_answer_file
from bench.calibrate.sets import ABSTAIN, all_questions, derived_sets, shift_years
from bench.loaders.locomo import load_locomo
from bench.published.model import PublishedError
from bench.scoring.locomo import normalize_answer, outcome_from_f1, score_answer
from bench.summarise.render import render_markdown
from bench.summarise.render_json import summary_to_json
from bench.summarise.stats import wilson_interval
from bench.summarise.summary import summarise_run
from tests.support.judge_stub import JudgeStub, shared_data_dir

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ROOT / "datasets" / "fixtures" / "smoke_locomo.json"
SMOKE_ANSWERS = ROOT / "datasets" / "fixtures" / "smoke_eval_results.json"


def _cell(data: dict, judge: str, name: str, group: str = "all") -> dict:
    (cell,) = [
        c for c in data["cells"] if (c["judge"], c["set"], c["group"]) == (judge, name, group)
    ]
    return cell


def test_derived_sets_are_deterministic_and_wrong_by_construction() -> None:
    dataset = load_locomo(SMOKE, "smoke")
    sets = {
        s.name: s
        for s in derived_sets(
            dataset, ["gold", "other_gold", "shifted_date", "trap", "not_mentioned"]
        )
    }
    assert sets == {s.name: s for s in derived_sets(dataset, list(sets))}
    for item in sets["other_gold"].items:
        assert item.question.category != 5
        assert normalize_answer(item.answer) != normalize_answer(str(item.question.gold))
        golds = [
            str(q.gold) for q in all_questions(dataset) if q.category == item.question.category
        ]
        assert item.answer in golds
    assert [i.answer for i in sets["shifted_date"].items] == ["7 May 2024", "1 August 2024"]
    assert {i.answer for i in sets["trap"].items} == {"3", "blue", "Yes", "basil"}
    assert {i.answer for i in sets["not_mentioned"].items} == {ABSTAIN}
    assert len(sets["gold"].items) == 16 and sets["gold"].truth == "right"
    assert shift_years("1999 and 2099") == "2000 and 2100"


def test_f1_rule_on_the_committed_synthetic_answer_file() -> None:
    cfg = _run_config(["dataset=smoke"])
    data = calibrate_config(cfg, Options(answers=[str(SMOKE_ANSWERS)]), problems := [])
    assert problems == []
    cell = _cell(data, "f1>=0.5", "smoke_eval_results")
    assert (cell["n"], cell["accepted"]) == (5, 2)
    assert cell["ci"] == pytest.approx(list(wilson_interval(2, 5)))
    assert (_cell(data, "f1>=0.5", "smoke_eval_results", "2")["accepted"]) == 1
    assert (_cell(data, "f1>=0.5", "smoke_eval_results", "1")["accepted"]) == 0
    published = _cell(data, "published:smoke_eval_results", "smoke_eval_results")
    assert (published["n"], published["accepted"]) == (5, 3)  # majorities T, F, T, F, T
    assert not [
        c for c in data["cells"] if c["judge"].startswith("published") and c["set"] == "gold"
    ]
    assert _cell(data, "f1>=0.5", "gold")["accepted"] == 16


def test_f1_rule_on_the_shared_vague_wrong_set() -> None:
    """The offline rule's false-accept rate on the published vague-but-wrong answers."""
    shared = shared_data_dir()
    vague = shared / "locomo-audit" / "ap-v2-vague-wrong.json" if shared else None
    if vague is None or not vague.is_file():
        pytest.skip("shared vague-wrong file absent")
    dataset = load_locomo(shared / "locomo10.json")  # type: ignore[operator]
    answers = read_answer_file(vague, dataset)
    raw = json.loads(vague.read_text())["detailed_results"]
    rows = [row for rows in raw.values() for row in rows]
    assert len(answers.answers.items) == len(rows) == 1540
    accepted = sum(
        outcome_from_f1(score_answer(i.answer, i.question), i.question, 0.5)
        for i in answers.answers.items
    )
    cfg = _run_config(["dataset=locomo", f"dataset.path={shared / 'locomo10.json'}"])
    data = calibrate_config(cfg, Options(sets=["gold"], answers=[str(vague)]), [])
    cell = _cell(data, "f1>=0.5", "ap-v2-vague-wrong")
    assert (cell["n"], cell["accepted"]) == (1540, accepted)
    assert 0.0 < cell["rate"] < 0.2  # far stricter than the published judge's 62.8%
    published = _cell(data, "published:ap-v2-vague-wrong", "ap-v2-vague-wrong")
    majority = sum(2 * sum(r["llm_judgments"].values()) > 3 for r in rows)
    assert published["accepted"] == majority


def test_a_misaligned_answer_file_is_one_line_error(tmp_path: Path, capsys) -> None:
    bad = json.loads(SMOKE_ANSWERS.read_text())
    bad["detailed_results"]["locomo_exp_user_0"][0]["question"] = "Something else?"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(PublishedError, match=r"\(locomo_0_qa0\) asks 'Something else\?'"):
        read_answer_file(path, load_locomo(SMOKE, "smoke"))
    assert main(["dataset=smoke", f"calibrate.answers={path}", f"calibrate.out={tmp_path}"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1
    assert not (tmp_path / "calibration.json").exists()


@pytest.mark.parametrize(
    ("arg", "expected"),
    [
        ("calibrate.sets=nope", "unknown set nope"),
        ("calibrate.max_items=0", "positive integer"),
        ("calibrate.colour=red", "unknown"),
        ("judge=nope", "unknown judge"),
        ("scoring.f1_treshold=0.3", "did you mean 'f1_threshold'?"),
        ("calibrate.answers=/nonexistent/x.json", "calibrate.answers=/nonexistent/x.json: no such"),
    ],
)
def test_bad_arguments_are_one_line(arg: str, expected: str, capsys) -> None:
    assert main(["dataset=smoke", arg]) == 2
    err = capsys.readouterr().err
    assert expected in err and err.count("\n") == 1


def test_llm_judge_is_calibrated_through_the_cache(tmp_path: Path, capsys, monkeypatch) -> None:
    shared = shared_data_dir()
    if shared is None:
        pytest.skip("shared data (judges/) absent")
    monkeypatch.setenv("BENCH_DATA_DIR", str(shared))
    out = tmp_path / "cal"
    with JudgeStub(lambda body: '{"label": "CORRECT"}') as server:
        args = [
            "dataset=smoke",
            "judge=mem0_locomo",
            "judges.0.runs=3",
            f"judges.0.endpoint.base_url={server.base_url}",
            "judges.0.endpoint.api_key_env=null",
            f"calibrate.out={out}",
            "calibrate.sets=gold,not_mentioned",
        ]
        assert main(args) == 0
        first = len(server.bodies)
        assert main(args) == 0
        again = len(server.bodies)
    data = json.loads((out / "calibration.json").read_text())
    # 12 answerable gold + 12 not-mentioned answers, three runs each, category 5 skipped;
    # qa 5 and qa 7 are the same question with the same gold: one request serves both
    assert first == (11 + 11) * 3 and again == first
    assert _cell(data, "mem0_locomo", "not_mentioned")["accepted"] == 12
    gold = _cell(data, "mem0_locomo", "gold")
    assert (gold["n"], gold["no_verdict"]) == (12, 4)
    (judge,) = [j for j in data["judges"] if j["name"] == "mem0_locomo"]
    assert judge["runs"] == 3 and judge["prompt_source"].startswith(
        "https://raw.githubusercontent.com/mem0ai/"
    )
    assert "### mem0_locomo (gpt-4o-mini" in (out / "CALIBRATION.md").read_text()
    assert "### mem0_locomo" in capsys.readouterr().out


def test_a_run_shows_its_judges_calibration_or_says_it_has_none(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(ROOT / "results" / "smoke-offline-v0.3.0", run)
    assert "## Judge calibration" not in render_markdown(summarise_run(run))
    assert (
        main(["dataset=smoke", f"calibrate.answers={SMOKE_ANSWERS}", f"calibrate.out={run}"]) == 0
    )
    summary = summarise_run(run)
    md = render_markdown(summary)
    assert "## Judge calibration" in md
    shown = summary_to_json(summary)["calibration"]
    assert shown["judge"] == "f1>=0.5" and len(shown["cells"]) > 10
    assert "this judge accepted 50% [9, 91] of smoke_eval_results wrong answers on temporal" in md
    _relabel_as_llm_judged(run)
    md = render_markdown(summarise_run(run))
    assert "judge llm has no calibration in calibration.json" in md


def _relabel_as_llm_judged(run: Path) -> None:
    """Make `run`'s outcomes those of LLM judge `llm` (model `m`), as run.json records it."""
    meta = json.loads((run / "run.json").read_text())
    meta["judges"] = [{"judge_id": "llm", "model": "m", "prompt_hash": "ab" * 32}]
    (run / "run.json").write_text(json.dumps(meta))
    for path in (run / "questions").glob("*.json"):
        record = json.loads(path.read_text())
        for arm in record["arms"].values():
            arm["outcome"] = "judge:llm"
        path.write_text(json.dumps(record))


def _judged_run(tmp_path: Path, cells: list[dict]) -> Path:
    """The committed smoke run re-labelled as judged by LLM judge `llm`, with a calibration."""
    run = tmp_path / "run"
    shutil.copytree(ROOT / "results" / "smoke-offline-v0.3.0", run)
    _relabel_as_llm_judged(run)
    judges = [{"name": "llm", "model": "m", "prompt_hash": "ab" * 32}]
    calibration = {"format": "armbench-calibration/1", "judges": judges, "cells": cells}
    (run / "calibration.json").write_text(json.dumps(calibration))
    return run


def _wrong_cell(accepted: int, n: int) -> dict:
    low, high = wilson_interval(accepted, n)
    cell = {"judge": "llm", "set": "vague", "truth": "wrong", "group": "all", "n": n}
    return cell | {"accepted": accepted, "no_verdict": 0, "rate": accepted / n, "ci": [low, high]}


def test_a_calibration_that_finds_the_judge_lenient_flags_it(tmp_path: Path) -> None:
    """20 of 50 known-wrong answers accepted (Wilson low end 28%): flagged, first lines say so."""
    summary = summarise_run(_judged_run(tmp_path, [_wrong_cell(20, 50)]))
    (flag,) = summary.flags.judges["llm"]
    assert flag.kind == "lenient (calibration)"
    assert "accepts 40% [28, 54] of known-wrong answers (vague, n=50" in flag.detail
    assert summary_to_json(summary)["flags"]["judges"]["llm"][0]["kind"] == flag.kind
    assert any("lenient" in line for line in summary.flags.headline())


def test_a_judge_within_the_bound_or_without_calibration_is_not_flagged(tmp_path: Path) -> None:
    """5 of 50 accepted (low end 4%) is not lenient; neither is a judge with no calibration."""
    assert (
        "llm" not in summarise_run(_judged_run(tmp_path / "a", [_wrong_cell(5, 50)])).flags.judges
    )
    assert "llm" not in summarise_run(_judged_run(tmp_path / "b", [])).flags.judges


@pytest.mark.slow
def test_ctrl_c_stops_a_calibration_at_once(tmp_path: Path) -> None:
    """SIGINT while every judge call hangs on a slow server: one line, exit 130 (issue 41)."""
    import os
    import signal
    import subprocess
    import sys

    from tests.support.e2e_support import ROOT
    from tests.support.fault_server import Fault, FaultServer

    with FaultServer() as server:
        server.always(Fault.slow(90.0))  # no reply before the communicate timeout below
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "bench.calibrate",
                "dataset=smoke",
                "judge=llm",
                "judges.0.endpoint.kind=openai",
                f"judges.0.endpoint.base_url={server.base_url}",
                "judges.0.endpoint.model=slow-judge",
                f"calibrate.out={tmp_path / 'cal'}",
                "calibrate.sets=gold",
            ],
            cwd=ROOT,
            env={**os.environ, "HYDRA_FULL_ERROR": "0"},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            while not server.requests:  # a judge call is in flight
                assert proc.poll() is None, proc.communicate()[1][-2000:]
                time.sleep(0.1)
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=45)  # before: blocked on the 90 s replies
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 130, err[-2000:]
    assert err.strip().splitlines()[-1].startswith("interrupted by SIGINT: calibration stopped")
    assert "Traceback" not in err


def test_a_missing_answer_file_is_refused_before_the_dataset_loads(capsys) -> None:
    """The check comes first: a dataset that cannot even load is never reached (issue 41)."""
    args = ["dataset.path=/nonexistent/locomo.json", "calibrate.answers=/nonexistent/x.json"]
    assert main(args) == 2
    assert "calibrate.answers=/nonexistent/x.json: no such file" in capsys.readouterr().err


def test_the_explorer_shows_the_lenient_flag_and_the_verdict(tmp_path: Path) -> None:
    """The explorer carries every flag the summary shows, `lenient (calibration)` included."""
    from bench.report.explorer import build_explorer
    from bench.runmeta import read_run_meta

    run = _judged_run(tmp_path, [_wrong_cell(20, 50)])
    page = build_explorer(run, read_run_meta(run / "run.json")[0])
    assert "FLAGGED judge llm: lenient (calibration) — accepts 40%" in page
    assert "publishable: false" in page and "judge-lenient: judge llm accepts 40%" in page
    assert "not LLM-judged" not in page  # offline answers, but an LLM judged them
    assert "OFFLINE — extractive answerer; outcome judge:llm" in page
    notes = summarise_run(run).notes
    assert not any("not LLM-judged" in n for n in notes)
    assert any(
        n.startswith(
            "OFFLINE run: answers from the extractive offline answerer, scored with judge:llm (m)."
        )
        for n in notes
    )


def test_a_small_judge_that_cannot_tell_gold_from_wrong_is_uninformative(tmp_path: Path) -> None:
    """SmolLM2-135M's calibration: 37.5% of gold and 37.5% of vague-wrong accepted."""
    gold = _wrong_cell(3, 8) | {"set": "gold", "truth": "right"}
    summary = summarise_run(_judged_run(tmp_path, [gold, _wrong_cell(3, 8)]))
    (reason,) = [r for r in summary.verdict.reasons if r.code == "judge-uninformative"]
    assert "37.5% (3/8) of gold answers and 37.5% (3/8) of known-wrong" in reason.sentence
    assert "judge-strict" in {r.code for r in summary.verdict.reasons}
