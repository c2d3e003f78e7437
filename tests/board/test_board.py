"""`python -m bench.board`: entries grouped by scale and question set, paired with the top.

Constructed runs (tests/summarise/test_claims.py's clean judged run and variants) check the
grouping, the exact McNemar pairing against hand counts, the verdict columns and the
one-line errors; the end-to-end test (slow, needs the shared data) boards the committed
offline run, an imported published file, a stub-judged LoCoMo run and their merge.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bench.board.cli import build_board, main
from bench.paths import PROJECT_ROOT
from bench.summarise.stats import mcnemar_exact_p
from tests.published.test_published import DATA, OFFLINE, needs_data
from tests.published.test_published import run_cli as published_cli
from tests.summarise.test_claims import build
from tests.support.judge_stub import JudgeStub


def test_one_scale_and_question_set_is_one_ranked_group(tmp_path: Path) -> None:
    """An error leaves the question set as it is (the question has a result)."""
    clean = build(tmp_path, {"where": "clean"})
    other = build(tmp_path, {"where": "other", "error": ("rag", 5)})
    dataset, groups, notes = build_board([clean, other])
    assert dataset == "locomo" and [len(g) for g in groups] == [4]
    assert [e.rank for e in groups[0]] == [1, 2, 3, 4]
    assert any("never ranked together" in n for n in notes)
    fewer = build(tmp_path, {"where": "fewer", "n": 300})
    assert sorted(len(g) for g in build_board([clean, fewer])[1]) == [2, 2]


def test_pairs_use_the_exact_mcnemar_test_on_shared_questions(tmp_path: Path) -> None:
    run = build(tmp_path, {"where": "lenient", "accept_all": True})  # every answer accepted
    base = build(tmp_path, {"where": "base"})  # every third answer wrong
    _, groups, _ = build_board([run, base])
    (group,) = groups
    top, *rest = group
    assert (top.accuracy.value, top.run) == (1.0, "lenient")
    below = next(e for e in rest if e.accuracy.value != 1.0)
    wrong = sum(1 for i in range(320) if i % 3 == 0)
    assert below.paired["n"] == 320 and below.paired["top only"] == wrong
    assert below.paired["this only"] == 0
    assert below.paired["McNemar exact p"] == pytest.approx(mcnemar_exact_p(wrong, 0))


def test_scales_are_never_ranked_together_and_the_verdict_is_a_column(tmp_path: Path) -> None:
    judged = build(tmp_path, {"where": "judged"})
    offline = build(tmp_path, {"where": "offline"}, lambda m: m.update(offline=True))
    for path in (offline / "questions").glob("*.json"):  # re-scored by the F1 rule
        record = json.loads(path.read_text())
        for arm in record["arms"].values():
            arm["outcome"] = "f1>=0.5"
        path.write_text(json.dumps(record))
    out = tmp_path / "board"
    assert main([str(judged), str(offline), "--out", str(out)]) == 0
    md = (out / "board.md").read_text()
    assert "## Group 1: scale f1>=0.5" in md
    assert "## Group 2: scale judge:mem0_locomo (gpt-4o-mini)" in md
    assert "| 1 | judged | mem | 66.6% | [61.2, 71.5] | 320 |" in md
    assert "| judge:mem0_locomo (gpt-4o-mini) | on file |" in md and "| true | — |" in md
    assert "| false | offline-answerer, unofficial-outcome |" in md
    page = (out / "board.html").read_text()
    assert "<script>" in page and 'class="board"' in page and "http" not in page.split("<body>")[1]


def test_bad_input_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "nope" in err
    one = build(tmp_path, {"where": "one"})
    two = build(tmp_path, {"where": "two"}, lambda m: m["dataset"].update(sha256="e" * 64))
    assert main([str(one), str(two), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "runs on different datasets" in err and err.count("\n") == 1


def _stub_judge(body: dict[str, object]) -> str:
    """Mem0's label: CORRECT when the generated answer shares a word with the gold."""
    text = str(body["messages"][-1]["content"])  # type: ignore[index]
    gold = re.findall(r"Gold answer: (.*)", text)[-1].lower().split()
    said = re.findall(r"Generated answer: (.*)", text)[-1].lower().split()
    return json.dumps({"label": "CORRECT" if set(gold) & set(said) else "WRONG"})


def stub_judged_run(out: Path) -> Path:
    """LoCoMo's first conversation, offline answers judged by `mem0_locomo` on a stub."""
    with JudgeStub(_stub_judge) as server:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "bench.run",
                "dataset=locomo",
                f"out={out}",
                "progress=false",
                "judge=mem0_locomo",
                "arms=[raw,rag]",
                "limit.conversations=1",
                f"judges.0.endpoint.base_url={server.base_url}",
                "judges.0.endpoint.api_key_env=null",
            ],
            cwd=PROJECT_ROOT,
            capture_output=True,
            text=True,
            timeout=300,
            env={
                "PATH": "/usr/bin:/bin",
                "PYTHONPATH": str(PROJECT_ROOT),
                "BENCH_DATA_DIR": str(DATA),
                "HOME": str(out.parent),
            },
        )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return out


@pytest.fixture(scope="module")
def board_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The committed offline run, fc-cot imported, a stub-judged run, and the merge."""
    root = tmp_path_factory.mktemp("board")
    imported = root / "fc-cot"
    cot = DATA / "locomo-audit" / "fc-gpt-4o-mini-cot.json"
    proc = published_cli(
        str(cot),
        "--format",
        "evermemos",
        "--out",
        str(imported),
        "--arm",
        "fc-cot",
        "--dataset",
        str(DATA / "locomo10.json"),
    )
    assert proc.returncode == 0, proc.stderr
    merged = root / "merged"
    proc = published_cli("merge", str(OFFLINE), str(imported), "--out", str(merged))
    assert proc.returncode == 0, proc.stderr
    judged = stub_judged_run(root / "judged")
    return {"imported": imported, "merged": merged, "judged": judged, "root": root}


@pytest.mark.slow
@needs_data
def test_the_board_of_offline_imported_and_judged_runs(board_runs: dict[str, Path]) -> None:
    out = board_runs["root"] / "board"
    runs = [OFFLINE, board_runs["imported"], board_runs["judged"]]
    proc = subprocess.run(
        [sys.executable, "-m", "bench.board", *map(str, runs), "--out", str(out)],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith("7 entries, 3 groups")
    md = (out / "board.md").read_text()
    assert "## Group 1: scale f1>=0.5, 1540 scored questions (4 entries" in md
    assert "scale judge:mem0_locomo (gpt-4o-mini), 152 scored questions" in md
    assert "scale majority:published:gpt-4o-mini, 1540 scored questions (1 entry" in md
    assert "| 1 | locomo-offline-v0.3.0 | raw | 28.1% |" in md
    assert "| 1 | fc-cot | fc-cot | 79.9% |" in md


@pytest.mark.slow
@needs_data
def test_the_merged_run_shows_both_scales_everywhere(board_runs: dict[str, Path]) -> None:
    """Summary, report, explorer and board: each arm on its scale, bannered mixed."""
    from bench.report.page import write_report
    from bench.summarise.render import render_markdown
    from bench.summarise.summary import summarise_run

    merged = board_runs["merged"]
    md = render_markdown(summarise_run(merged))
    assert "| raw [f1>=0.5] | 28.1% |" in md and "| fc-cot [majority:published:gpt-4o-mini]" in md
    assert "MIXED SCALES — raw, rag, neuromorphic, tuned on f1>=0.5; fc-cot on majority" in md
    assert "not LLM-judged" in md and "OFFLINE run (arms raw, rag, neuromorphic, tuned)" in md
    assert "acc all counts different questions per arm" in md
    page = write_report(merged, png=False).read_text()
    assert "MIXED SCALES" in page and "OFFLINE — extractive answerer" not in page
    assert "fc-cot [majority:published:gpt-4o-mini]" in page
    explorer = (merged / "explorer.html").read_text()
    assert "MIXED SCALES" in explorer and "fc-cot [majority:published:gpt-4o-mini]" in explorer
    assert "publishable: false" in explorer
    _, groups, _ = build_board([merged])
    assert {g[0].scale for g in groups} == {"f1>=0.5", "majority:published:gpt-4o-mini"}
