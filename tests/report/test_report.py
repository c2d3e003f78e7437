"""bench.report: one self-contained Plotly report.html per run, numbers from the summariser."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from bench import summarise
from bench.report import figures
from bench.report import page as report
from bench.report.png import chart_page
from bench.report.tables import p_text
from bench.summarise import render
from bench.summarise.model import Summary
from bench.summarise.stats import mcnemar_exact_p
from tests.report.test_frame import ARMS, make_run


@pytest.fixture(scope="module")
def offline_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    run_dir = make_run(tmp_path_factory.mktemp("offline"))
    assert report.main([str(run_dir)]) == 0
    return run_dir, (run_dir / "report.html").read_text(encoding="utf-8")


def test_report_is_written_with_every_arm(offline_report: tuple[Path, str]) -> None:
    _, text = offline_report
    assert text.startswith("<!DOCTYPE html>") and text.rstrip().endswith("</html>")
    for arm in ARMS:
        assert arm in text
    for div in ("fig-accuracy", "fig-categories", "fig-pairs", "fig-tokens", "fig-latency"):
        assert f'id="{div}"' in text


def test_report_is_self_contained(offline_report: tuple[Path, str]) -> None:
    _, text = offline_report
    assert not re.search(r"<script[^>]*\bsrc=[\"']?https?:", text)
    assert '<script src="http' not in text
    assert "Plotly.newPlot" in text
    assert text.count("plotly.js v") >= 1  # the library itself is inlined...
    assert len(text) > 1_000_000  # ...in full (it is several MB)


def test_offline_banner_only_when_offline(offline_report: tuple[Path, str], tmp_path: Path) -> None:
    _, text = offline_report
    assert report.OFFLINE_BANNER in text
    online = make_run(tmp_path, offline=False)
    online_text = report.build_report(online)
    assert report.OFFLINE_BANNER not in online_text
    assert "gpt-4o-mini" in online_text and "judge:llm" in online_text


def test_header_carries_run_metadata(offline_report: tuple[Path, str]) -> None:
    run_dir, text = offline_report
    meta = summarise.summarise_run(run_dir).meta
    assert meta is not None and meta.dataset.sha256 and meta.dataset.sha256 in text
    assert "offline-extractive" in text
    assert "f1&gt;=0.5" in text or "f1>=0.5" in text


def test_report_numbers_come_from_the_summary(offline_report: tuple[Path, str]) -> None:
    run_dir, text = offline_report
    summary = summarise.summarise_run(run_dir)
    row = next(r for r in summary.pairs if (r.a, r.b) == ("raw", "rag") and r.set == "scored")
    # the exact McNemar p of this pair, as the table prints it
    assert row.pooled.p == mcnemar_exact_p(row.pooled.a_only, row.pooled.b_only)
    cells = f"<td>{row.pooled.a_only}</td><td>{row.pooled.b_only}</td><td>{row.pooled.p:.3g}</td>"
    assert cells in text
    rate = summary.arms["rag"].accuracy["all"]
    assert f"({rate.k}/{rate.n})" in text


@pytest.mark.slow
def test_summary_md_written_only_when_absent(offline_report: tuple[Path, str]) -> None:
    run_dir, _ = offline_report
    summary_md = run_dir / "SUMMARY.md"
    assert summary_md.is_file() and summary_md.stat().st_size > 0
    summary_md.write_text("kept\n", encoding="utf-8")
    report.write_report(run_dir)
    assert summary_md.read_text(encoding="utf-8") == "kept\n"


@pytest.mark.slow
def test_report_does_not_touch_the_records(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path)
    before = {p: p.read_bytes() for p in (run_dir / "questions").iterdir()}
    report.write_report(run_dir)
    assert {p: p.read_bytes() for p in (run_dir / "questions").iterdir()} == before


def test_bad_run_dir_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert report.main([str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "missing" in err and "\n" not in err
    (tmp_path / "empty" / "questions").mkdir(parents=True)
    assert report.main([str(tmp_path / "empty")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err
    assert not (tmp_path / "empty" / "report.html").exists()


def test_offline_banner_names_the_rule_in_use(offline_report: tuple[Path, str]) -> None:
    run_dir, _ = offline_report
    summary = summarise.summarise_run(run_dir)
    assert report.offline_banner(summary) == report.OFFLINE_BANNER
    stricter = replace(summary, outcome="f1>=0.7", f1_threshold=0.7)
    assert "F1 ≥ 0.7" in report.offline_banner(stricter)
    judged = replace(summary, outcome="judge:llm")
    assert "not LLM-judged" not in report.offline_banner(judged)
    assert "judge:llm" in report.offline_banner(judged)


def _figure(text: str, div: str) -> str:
    """The Plotly.newPlot call of one figure div (its JSON data and layout)."""
    start = text.index(f'"{div}"', text.index(f'id="{div}"'))
    return text[start : text.index("</script>", start)]


def test_context_tokens_on_a_log_axis(offline_report: tuple[Path, str]) -> None:
    _, text = offline_report
    assert '"type":"log"' in _figure(text, "fig-tokens")


def test_accuracy_axes_start_at_zero_and_fit_the_intervals(
    offline_report: tuple[Path, str],
) -> None:
    run_dir, text = offline_report
    summary = summarise.summarise_run(run_dir)
    rates = [a.accuracy[s] for a in summary.arms.values() for s in ("scored", "all")]
    lo, hi = figures.rate_range(rates)
    ends = [100 * e for r in rates if r.ci for e in r.ci]
    assert lo == 0.0 and min(ends) > 0  # from 0, not from near the lowest interval
    assert max(ends) < hi < 100  # the top still fits the intervals, padded
    assert figures.rate_range([]) == [0.0, 100.0]
    for div in ("fig-accuracy", "fig-categories", "fig-efficiency", "fig-speed"):
        assert '"range":[0.0,' in _figure(text, div), div
    for fig in (figures.accuracy_figure(summary), figures.category_figure(summary)):
        assert fig.layout.yaxis.range[0] == 0
    assert '"error_y":{"array"' in _figure(text, "fig-accuracy")  # intervals drawn


def test_pairs_are_horizontal_rows_for_any_number_of_arms(offline_report: tuple[Path, str]):
    """Discordance labels stand one under another, and the figure grows with the pairs."""
    run_dir, _ = offline_report
    summary = summarise.summarise_run(run_dir)
    fig = figures.pairs_figure(summary)
    assert fig is not None and {t.orientation for t in fig.data} == {"h"}
    rows = report_pair_count(summary)
    assert list(fig.data[0].y)[0].startswith("raw vs rag") and len(fig.data[0].y) == rows
    assert fig.layout.height == figures.pairs_height(rows) >= 36 * rows
    assert figures.pairs_height(20) > figures.pairs_height(2)


def report_pair_count(summary: Summary) -> int:
    """Pairs the report draws: every arm pair on each shown set."""
    n = len(summary.arms)
    return n * (n - 1) // 2 * (2 if summary.locomo_style else 1)


def test_reach_and_miss_tables_and_the_explorer_link(offline_report: tuple[Path, str]) -> None:
    fixture_dir, fixture_text = offline_report
    assert '<a href="explorer.html">explorer.html</a>' in fixture_text
    assert (fixture_dir / "explorer.html").is_file()
    run_dir = Path(__file__).resolve().parents[2] / "results" / "smoke-offline-v0.3.0"
    text = report.build_report(run_dir)  # writes nothing
    summary = summarise.summarise_run(run_dir)
    assert "<h2>Reachability beside accuracy" in text and "gold-token recall" in text
    row = next(r for r in summary.reach if r.gold_token_recall is not None)
    assert f"<td>{100 * row.gold_token_recall:.1f}%</td>" in text
    assert "<h2>Wrong answers: retrieval miss / reader miss</h2>" in text
    arm, by_group = next(iter(summary.misses.items()))
    retrieval = sum(c["retrieval"] for c in by_group.values())
    reader = sum(c["reader"] for c in by_group.values())
    assert f"<td>{retrieval} / {reader}</td></tr>" in text


def test_pairs_show_holm_beside_raw_p(offline_report: tuple[Path, str]) -> None:
    run_dir, text = offline_report
    summary = summarise.summarise_run(run_dir)
    row = next(r for r in summary.pairs if (r.a, r.b) == ("raw", "rag") and r.set == "scored")
    assert row.pooled.p_holm is not None
    assert f"p = {row.pooled.p:.3g}, Holm {row.pooled.p_holm:.3g}" in _figure(text, "fig-pairs")
    clustered = row.pooled.clustered
    assert clustered is not None and clustered.p_holm is not None
    shown = f"clustered p = {clustered.p:.3g}, Holm {clustered.p_holm:.3g} (K = {clustered.k})"
    assert shown in _figure(text, "fig-pairs")
    assert "generalises to conversations like these" in text


def test_zero_discordant_pairs_is_said_so(offline_report: tuple[Path, str]) -> None:
    run_dir, _ = offline_report
    summary = summarise.summarise_run(run_dir)
    tied = replace(summary.pairs[0].pooled, a_only=0, b_only=0, p=1.0)
    assert p_text(tied) == "no discordant pairs"
    assert render.power_note(tied) == "no discordant pairs"
    assert render.power_note(replace(tied, a_only=1, n=10)) == "underpowered"


def test_efficiency_chart_has_one_point_per_arm(offline_report: tuple[Path, str]) -> None:
    run_dir, text = offline_report
    summary = summarise.summarise_run(run_dir)
    fig = figures.efficiency_figure(summary)
    assert fig is not None and [t.name for t in fig.data] == list(summary.arms)
    assert fig.layout.xaxis.type == "log"
    assert 'id="fig-efficiency"' in text


def test_speed_chart_puts_accuracy_against_median_latency(
    offline_report: tuple[Path, str],
) -> None:
    run_dir, text = offline_report
    summary = summarise.summarise_run(run_dir)
    fig = figures.speed_figure(summary)
    assert fig is not None and [t.name for t in fig.data] == list(summary.arms)
    for trace in fig.data:
        arm = summary.arms[trace.name]
        assert list(trace.x) == [arm.latency_ms["p50"]]
        assert list(trace.y) == [pytest.approx(100 * (arm.accuracy["scored"].value or 0))]
    assert fig.layout.xaxis.type == "log" and 'id="fig-speed"' in text


def test_long_arm_names_get_angled_labels_and_room() -> None:
    short = figures.arm_layout(["raw", "rag"])
    assert "xaxis" not in short
    many = figures.arm_layout([f"arm-with-a-long-name-{i}" for i in range(5)])
    assert many["xaxis"]["tickangle"] == -30
    assert many["xaxis"]["automargin"] and many["height"] > short["height"]


def test_log_axis_ticks_at_one_two_five() -> None:
    axis = figures.log_axis([800.0, 19_000.0])
    assert axis["type"] == "log"
    assert axis["tickvals"] == [500, 1000, 2000, 5000, 10_000, 20_000]
    assert axis["ticktext"] == ["500", "1k", "2k", "5k", "10k", "20k"]


@pytest.mark.slow
def test_make_report_target_is_listed() -> None:
    import shutil
    import subprocess

    if shutil.which("make") is None:
        pytest.skip("no make binary")
    root = Path(__file__).resolve().parents[2]
    listed = subprocess.run(["make", "-s", "help"], cwd=root, capture_output=True, text=True)
    assert "make report" in listed.stdout
    dry = subprocess.run(
        ["make", "-n", "report", "RUN=results/x", "STAMP=Makefile"],
        cwd=root,
        capture_output=True,
        text=True,
    )
    assert "-m bench.report results/x" in dry.stdout


def test_png_export_without_a_browser_is_one_note(tmp_path: Path) -> None:
    """No usable Chromium (BROWSER_PATH names nothing): the report is written, PNGs skipped."""
    run_dir = make_run(tmp_path)
    env = {**os.environ, "BROWSER_PATH": str(tmp_path / "no-such-browser")}
    done = subprocess.run(
        [sys.executable, "-m", "bench.report", str(run_dir)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    notes = [ln for ln in done.stderr.splitlines() if "PNG export" in ln]
    assert len(notes) == 1 and notes[0].startswith("note: PNG export of the charts skipped: ")
    assert "Traceback" not in done.stderr
    assert (run_dir / "report.html").is_file() and not list(run_dir.glob("charts/*.png"))


def test_chart_page_loads_nothing_from_the_network() -> None:
    """kaleido's default page fetches MathJax from a CDN; the chart page loads local files only."""
    page = chart_page().generate_index()
    sources = re.findall(r"""\bsrc=["']?([^"' >]+)""", page)
    assert any(src.endswith("plotly.min.js") for src in sources), sources
    assert all(src.startswith("file://") for src in sources), sources


def test_every_chart_carries_the_runs_scale_and_the_page_its_verdict(
    offline_report: tuple[Path, str],
) -> None:
    """Each chart (and so each PNG drawn from it) says the run's scale under its title."""
    run_dir, text = offline_report
    _, figures, summary = report._build(run_dir, "official")
    assert figures and all(
        f"<sup>{report.OFFLINE_BANNER}</sup>" in (fig.layout.title.text or "") for _, fig in figures
    )
    assert report.scale_label(summary) == report.OFFLINE_BANNER
    assert '<div class="verdict banner"><strong>publishable: false' in text
    assert "offline-answerer: answers come from the offline extractive answerer" in text
