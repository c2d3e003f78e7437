"""The paired sweep table of `-m` sweeps: bench.run, bench.screen and bench.suite jobs are
each paired with the baseline job on question id (exact McNemar)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from statsmodels.stats.contingency_tables import mcnemar

from bench.summarise import sweep
from bench.summarise.summary import summarise_run
from bench.summarise.sweep import SweepRow, compare
from tests.support.e2e_support import load_records, run_cli

SMOKE_SWEEP = ("dataset=smoke", "arms=[rag]", "arm_options.rag.top_k=1,10", "progress=false")


def _table(text: str, metric: str) -> dict[str, list[str]]:
    """The rows of one metric's table, keyed by job."""
    lines = text.split(f"## {metric}\n", 1)[1].split("\n\n", 1)[0].strip().splitlines()[2:]
    return {
        cells[1].strip(): [c.strip() for c in cells[2:]]
        for cells in (ln.split("|") for ln in lines)
    }


def _statsmodels_p(a: dict[str, bool], b: dict[str, bool]) -> float:
    shared = sorted(set(a) & set(b))
    table = [[0, 0], [0, 0]]
    for q in shared:
        table[int(not a[q])][int(not b[q])] += 1
    return float(mcnemar(table, exact=True).pvalue)


@pytest.mark.slow
def test_run_sweep_pairs_every_job_with_the_first_on_question_id(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    proc = run_cli("-m", *SMOKE_SWEEP, f"out={out}")
    assert proc.returncode == 0, proc.stderr[-2000:]
    jobs = [f"arm_options.rag.top_k={k},arms=_rag_,dataset=smoke" for k in (1, 10)]  # shell-safe
    assert all((out / j / "run.json").is_file() for j in jobs)
    verdict = summarise_run(out / jobs[1]).verdict  # compared on its own questions
    assert "tuned-in-sample" in {r.code for r in verdict.reasons}
    text = (out / "sweep.md").read_text()
    rows = _table(text, "correct")
    assert list(rows) == jobs and "(baseline)" in rows[jobs[0]]
    outcomes = [
        {q: r["arms"]["rag"]["correct"] for q, r in load_records(out / j).items()} for j in jobs
    ]
    n, rate, base_rate, job_only, base_only, p, _ = rows[jobs[1]][1:8]
    assert int(n) == len(outcomes[0]) == 16
    assert int(job_only) == sum(outcomes[1][q] and not outcomes[0][q] for q in outcomes[0])
    assert int(base_only) == sum(outcomes[0][q] and not outcomes[1][q] for q in outcomes[0])
    assert rate == f"{sum(outcomes[1].values()) / 16:.1%}"
    assert base_rate == f"{sum(outcomes[0].values()) / 16:.1%}"
    assert p == sweep._p(_statsmodels_p(outcomes[1], outcomes[0]))
    # a chosen baseline: the CLI re-renders against the second job
    again = run_cli(str(out), "--baseline", jobs[1], module="bench.summarise.sweep")
    assert again.returncode == 0, again.stderr
    assert "(baseline)" in _table(again.stdout, "correct")[jobs[1]]
    bad = run_cli(str(out), "--baseline", "nope", module="bench.summarise.sweep")
    assert bad.returncode == 2 and bad.stderr.startswith("error: --baseline nope: no such job")


@pytest.mark.slow
def test_screen_sweep_pairs_evidence_reached(tmp_path: Path) -> None:
    out = tmp_path / "screens"
    proc = run_cli("-m", *SMOKE_SWEEP, f"out={out}", module="bench.screen")
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = _table((out / "sweep.md").read_text(), "evidence reached")
    assert len(rows) == 2
    first, second = rows.values()
    assert "(baseline)" in first
    assert int(second[1]) > 0 and int(second[4]) >= int(second[5])  # top 10 reaches more


def test_compare_pairs_on_shared_ids_and_marks_disjoint_jobs() -> None:
    rows = [
        SweepRow("a", 0, "run", {"correct": {"x": {"1": True, "2": False, "3": False}}}),
        SweepRow("b", 1, "run", {"correct": {"x": {"2": True, "3": True, "4": True}}}),
        SweepRow("c", 2, "run", {"correct": {"x": {"9": True}}}),
    ]
    got = {c.job: c for c in compare(rows)}
    assert (got["b"].n, got["b"].job_only, got["b"].base_only) == (2, 2, 0)
    assert got["b"].p == pytest.approx(0.5)
    assert got["c"].n == 0 and got["c"].p is None
    assert got["a"].baseline == "a" and got["a"].p is None
    other = {c.job: c for c in compare(rows, baseline="b")}
    assert other["a"].baseline == "b" and (other["a"].job_only, other["a"].base_only) == (0, 2)
    assert "not paired" in sweep.render(rows)


def test_run_jobs_with_clusters_get_the_clustered_test() -> None:
    """`bench.run` rows carry each question's conversation: the clustered test rides along."""
    import random

    from bench.summarise.clustered import clustered_paired
    from bench.summarise.stats import holm

    rng = random.Random(4)
    qids = [f"conv-{c}:{q}" for c in range(8) for q in range(15)]
    clusters = {q: q.split(":")[0] for q in qids}
    jobs = [
        SweepRow(j, i, "run", {"correct": {"x": {q: rng.random() < p for q in qids}}}, {}, clusters)
        for i, (j, p) in enumerate([("base", 0.4), ("up", 0.6), ("same", 0.4)])
    ]
    got = {c.job: c for c in compare(jobs)}
    base = jobs[0].outcomes["correct"]["x"]
    for name in ("up", "same"):
        mine = jobs[[r.job for r in jobs].index(name)].outcomes["correct"]["x"]
        expected = clustered_paired([(clusters[q], base[q], mine[q]) for q in sorted(qids)])
        test = got[name].clustered
        assert test is not None and test.k == 8
        assert (test.p, test.ci95, test.deff) == (expected.p, expected.ci95, expected.deff)
    ps = [got[n].clustered.p for n in ("up", "same")]  # type: ignore[union-attr]
    assert [got[n].clustered.p_holm for n in ("up", "same")] == holm(ps)  # type: ignore[union-attr]
    assert got["base"].clustered is None
    table = sweep.render(jobs)
    assert "conversations like these" in table and "| 8 | " in table
    # rows written before clusters (or screen/suite rows) have no clustered test
    old = [SweepRow(r.job, r.num, r.tool, r.outcomes) for r in jobs]
    assert all(c.clustered is None for c in compare(old))


def test_cli_without_rows_is_one_error_line(tmp_path: Path) -> None:
    assert sweep.main([str(tmp_path)]) == 2


def test_rows_round_trip(tmp_path: Path) -> None:
    folder = tmp_path / sweep.SWEEP_ROWS
    folder.mkdir()
    row = SweepRow("j", 3, "suite", {"hit@10": {"rag": {"q": True}}}, {"cutoffs": [10]})
    (folder / "j.json").write_text(json.dumps(row.__dict__))
    assert sweep.read_rows(tmp_path) == [row]


def test_sweep_and_repeats_views_import_only_the_standard_library() -> None:
    import subprocess
    import sys

    code = (
        "import sys, bench.summarise.sweep, bench.summarise.repeats\n"
        "out = {m.split('.')[0] for m in sys.modules} - set(sys.stdlib_module_names)\n"
        "print(sorted(m for m in out if not m.startswith('_') and m != 'bench'))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "[]"


def test_a_row_with_malformed_clusters_is_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / sweep.SWEEP_ROWS
    folder.mkdir()
    row = {"job": "j", "num": 0, "tool": "run", "outcomes": {}, "clusters": ["conv-1"]}
    (folder / "j.json").write_text(json.dumps(row))
    assert sweep.main([str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "clusters" in err
