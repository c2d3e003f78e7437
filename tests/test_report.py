"""bench.report: one self-contained Plotly report.html per run, numbers from the summariser."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from bench import report, summarise
from bench.summarise.stats import mcnemar_exact_p
from tests.test_frame import ARMS, make_run


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


def test_summary_md_written_only_when_absent(offline_report: tuple[Path, str]) -> None:
    run_dir, _ = offline_report
    summary_md = run_dir / "SUMMARY.md"
    assert summary_md.is_file() and summary_md.stat().st_size > 0
    summary_md.write_text("kept\n", encoding="utf-8")
    report.write_report(run_dir)
    assert summary_md.read_text(encoding="utf-8") == "kept\n"


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
