"""The summariser's command line: exit codes, --write, formats, golden output, stdlib isolation."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.paths import PROJECT_ROOT
from bench.perf.summarise import figures
from bench.summarise import load_run, main, summarise_records, summarise_run
from bench.summarise.comparable import comparable_export
from bench.summarise.render import render_markdown
from bench.summarise.render_json import summary_to_json
from tests.summarise.test_summarise import arm, record, small_run, write_run

GOLDEN = Path(__file__).parents[1] / "golden" / "summarise"
UPDATE = os.environ.get("ARMBENCH_UPDATE_GOLDEN") == "1"

META = {
    "schema_version": 1,
    "run_name": "small",
    "created_at": "2026-01-01T00:00:00Z",
    "dataset": {"name": "locomo", "path": "locomo10.json", "sha256": "ab" * 32},
    "arms": ["raw", "rag"],
    "provider": {
        "name": "openai",
        "answerer_model": "gpt-answer",
        "extractor_model": "gpt-extract",
        "embedder_model": "text-embed",
    },
    "judges": [{"judge_id": "llm", "model": "gpt-judge", "prompt_hash": "cd" * 32}],
    "outcome": "f1>=0.5",
    "config": {"scoring": {"f1_threshold": 0.5}, "arm_options": {"rag": {"top_k": 10}}},
    "provenance": {"git_commit": "0123abc", "git_dirty": False},
    "warnings": ["judge model equals the answering model"],
}


def test_cli_prints_tables_and_writes_summary_md(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = write_run(small_run(tmp_path), [], META)
    assert main([str(run), "--write"]) == 0
    out = capsys.readouterr().out
    assert "| raw | rag | scored (pooled) | 5 | 1 | 2 |" in out
    assert "1 multi-hop (n=2)" in out and "5 adversarial (n=2)" in out
    assert "not a result" in out
    md = (run / "SUMMARY.md").read_text(encoding="utf-8")
    assert "- answerer model: gpt-answer" in md
    assert "- judges: llm (gpt-judge, prompt cdcdcdcdcdcd)" in md
    assert "- outcome rule: f1>=0.5" in md
    assert "- label scheme: official (1 multi-hop" in md
    assert "run warning: judge model equals the answering model" in md
    assert (
        out.split("## Accuracy per arm")[1].rstrip() == md.split("## Accuracy per arm")[1].rstrip()
    )


def test_cli_json_and_mem0_labels(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = small_run(tmp_path)
    assert main([str(run), "--json", "--labels", "mem0"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["labels"] == "mem0" and out["categories"]["1"]["label"] == "single-hop"
    assert out["arms"]["rag"]["n_scored"] == 5


def test_cli_comparable_export(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = write_run(small_run(tmp_path), [], META)
    assert main([str(run), "--format", "comparable", "--write"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out == json.loads((run / "comparable.json").read_text(encoding="utf-8"))
    rag = next(s for s in out["submissions"] if s["metadata"]["arm"] == "rag")
    reasons = rag["metadata"].pop("reasons")
    assert [r["code"] for r in reasons] == [
        "unofficial-outcome",
        "incomplete-coverage",
        "too-few-questions",
    ]
    assert out["verdict"]["arms"]["rag"]["reasons"] == [r["code"] for r in reasons]
    assert rag["metadata"] == {
        "benchmark": "locomo",
        "arm": "rag",
        "answerer_model": "gpt-answer",
        "judge_model": "none (f1>=0.5)",
        "provider": "openai",
        "top_k": 10,
        "outcome": "f1>=0.5",
        "scale": "f1>=0.5",
        "label_scheme": "official",
        "run_name": "small",
        "flags": {"degraded": False, "arm": [], "judge": []},  # an offline run: nothing flagged
        "publishable": False,
    }
    assert rag["accuracy"]["overall"] == pytest.approx(80.0)  # 4 of 5 scored, error excluded
    assert rag["accuracy"]["by_question_type"]["single-hop"] == pytest.approx(100.0)
    assert len(rag["evaluations"]) == 8
    failed = next(e for e in rag["evaluations"] if e["status"] == "error")
    assert failed["correct"] is None and failed["question_id"] == "conv-1:5"


@pytest.mark.parametrize(
    ("setup", "expected"),
    [
        ("no_questions", "no questions/ folder"),
        ("empty", "no question records"),
        ("bad_json", "conv-1_0.json: unreadable record"),
        ("bad_version", "schema_version 99"),
        ("no_arms", "conv-1_0.json: unreadable record"),
    ],
)
def test_cli_fails_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], setup: str, expected: str
) -> None:
    questions = tmp_path / "questions"
    if setup != "no_questions":
        questions.mkdir()
    bodies = {
        "bad_json": "{not json",
        "bad_version": json.dumps({"schema_version": 99, "arms": {}}),
        "no_arms": json.dumps({"schema_version": 1, "question_id": "conv-1:0"}),
    }
    if setup in bodies:
        (questions / "conv-1_0.json").write_text(bodies[setup], encoding="utf-8")
    assert main([str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert expected in err and err.count("\n") == 1


@pytest.mark.parametrize(
    ("where", "field", "value"),
    [
        ("result", "latency_ms", "slow"),
        ("result", "scores", "f1"),
        ("result", "outcome", 3),
        ("result", "correct", "yes"),
        ("result", "status", ["x"]),
        ("record", "category", [4]),
        ("record", "question_id", None),
    ],
)
@pytest.mark.parametrize("hostile", ["run", "baseline"])
def test_a_value_of_the_wrong_type_is_one_line_naming_the_record(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    where: str,
    field: str,
    value: object,
    hostile: str,
) -> None:
    """Records are type-checked as they are read (`bench.typed_json`): a hostile value is
    one line naming the file and the field, exit 2, in the run and in its baseline."""
    run = small_run(tmp_path / "run")
    bad = small_run(tmp_path / "baseline") if hostile == "baseline" else run
    path = bad / "questions" / "conv-1_3.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    (data if where == "record" else data["arms"]["rag"])[field] = value
    path.write_text(json.dumps(data), encoding="utf-8")
    args = [str(run), "--json"] + (["--baseline", str(bad)] if bad != run else [])
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert "conv-1_3.json: unreadable record (TypeError: " in err, err
    assert f"{field} is {value!r}"[:40] in err and ", not " in err, err
    assert str(bad / "questions") in err, err


def test_cli_rejects_conflicting_formats(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["somewhere", "--json", "--format", "text"]) == 2
    assert "conflicts" in capsys.readouterr().err


def test_duplicate_question_ids_are_refused(tmp_path: Path) -> None:
    rec = record("conv-1:0", 4, {"a": arm(True, 1.0)})
    write_run(tmp_path, [rec])
    (tmp_path / "questions" / "copy.json").write_text(
        (tmp_path / "questions" / "conv-1_0.json").read_text(encoding="utf-8"), encoding="utf-8"
    )
    with pytest.raises(Exception, match="also in"):
        summarise_run(tmp_path)


BLOCK = """
import importlib.abc, runpy, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in {'numpy', 'scipy', 'pandas'}:
            raise ImportError('blocked ' + name)
        return None
sys.meta_path.insert(0, Block())
"""
BLOCKER = (
    BLOCK
    + """
sys.argv = ['bench.summarise', *sys.argv[1:]]
code = 0
try:
    runpy.run_module('bench.summarise', run_name='__main__', alter_sys=True)
except SystemExit as exc:
    code = exc.code
outside = {m.split('.')[0] for m in sys.modules} - set(sys.stdlib_module_names)
outside = sorted(m for m in outside if not m.startswith('_') and m != 'bench')
print('OUTSIDE_STDLIB', outside, file=sys.stderr)
sys.exit(code)
"""
)


def run_blocked(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
    return subprocess.run(
        [sys.executable, "-c", BLOCKER, *args],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_summariser_runs_where_numpy_scipy_pandas_cannot_be_imported(tmp_path: Path) -> None:
    run = write_run(small_run(tmp_path / "now"), [], META)
    base = small_run(tmp_path / "base")
    for fmt in ("text", "json", "comparable"):
        proc = run_blocked(str(run), "--baseline", str(base), "--format", fmt, "--write")
        assert proc.returncode == 0, proc.stderr
        assert "OUTSIDE_STDLIB []" in proc.stderr
    assert "## Against baseline" in (run / "SUMMARY.md").read_text(encoding="utf-8")
    control = subprocess.run(
        [sys.executable, "-c", BLOCK + "import numpy"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "blocked numpy" in control.stderr  # the blocker really blocks


def test_cli_process_prints_what_the_in_process_call_prints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`python -m bench.summarise` in a process prints exactly what `main` returns in one."""
    run = write_run(small_run(tmp_path / "now"), [], META)
    base = small_run(tmp_path / "base")
    buffered = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    for args in (["--json"], ["--format", "comparable", "--write"], ["--baseline", str(base)]):
        assert main([str(run), *args]) == 0
        expected = capsys.readouterr().out
        proc = subprocess.run(
            [sys.executable, "-m", "bench.summarise", str(run), *args],
            cwd=PROJECT_ROOT,
            env={**buffered, "PYTHONPATH": str(PROJECT_ROOT)},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert (proc.returncode, proc.stderr, proc.stdout) == (0, "", expected)
    assert (run / "comparable.json").read_text(encoding="utf-8") == expected_comparable(run)


def expected_comparable(run: Path) -> str:
    """The comparable export `--format comparable --write` writes next to SUMMARY.md."""
    loaded = load_run(run)
    export = comparable_export(summarise_records(loaded), loaded.records)
    return json.dumps(export, indent=1, allow_nan=False) + "\n"


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.read_text(encoding="utf-8") == text, f"rerun with ARMBENCH_UPDATE_GOLDEN=1 ({path})"


def test_golden_json_and_summary_md(tmp_path: Path) -> None:
    run = write_run(small_run(tmp_path / "now"), [], META)
    base = small_run(tmp_path / "base")
    s = summarise_run(run, baseline=base)
    out = summary_to_json(s)
    out["run_dir"], out["baseline_dir"] = "<RUN_DIR>", "<BASELINE_DIR>"
    check_golden("small_run.json", json.dumps(out, indent=1, sort_keys=True) + "\n")
    md = render_markdown(s).replace(str(run), "<RUN_DIR>").replace(str(base), "<BASELINE_DIR>")
    check_golden("small_run_SUMMARY.md", md)


RATIO_KEYS = {
    "summarise_over_bare_read",
    "summarise_over_bare_read_gc_on",
    "summarise_over_bare_read_same_reader",
    "cpu_load_over_bare_read",
    "cpu_stats_over_bare_read",
    "cpu_summarise_over_bare_read",
}


def test_perf_figures_shape(tmp_path: Path) -> None:
    """Synthetic figures, then the same ratios over a real run's own files (`committed`)."""
    result = figures(repeats=1, committed=small_run(tmp_path / "real"))
    real = result.pop("committed_run")
    assert set(result) == {
        "summarise_4x1986_s",
        "render_text_4x1986_s",
        "bare_read_json_4x1986_s",
        *RATIO_KEYS,
    }
    cpu = result["cpu_load_over_bare_read"] + result["cpu_stats_over_bare_read"]
    assert result["cpu_summarise_over_bare_read"] == pytest.approx(cpu, abs=0.02)
    ratio = result["summarise_4x1986_s"] / result["bare_read_json_4x1986_s"]
    assert result["summarise_over_bare_read"] == pytest.approx(ratio, abs=0.01)
    assert 0 < result["summarise_4x1986_s"] < 10  # target is well under 1 s; this guards collapse
    assert set(real) == {"run", "summarise_s", "bare_read_json_s", *RATIO_KEYS}
    assert real["run"] == "real"
    # both times are rounded to 4 places and the ratio to 2: it lies within those bounds
    summ, bare, half = real["summarise_s"], real["bare_read_json_s"], 0.00005
    low, high = (summ - half) / (bare + half), (summ + half) / max(bare - half, 1e-9)
    assert low - 0.005 <= real["summarise_over_bare_read"] <= high + 0.005


def test_bare_read_parses_every_record(tmp_path: Path) -> None:
    """The floor loop reads each record file once (the ratio's denominator is honest)."""
    from bench.files import read_file_bytes
    from bench.perf.summarise import bare_read, write_synthetic_run

    assert bare_read(tmp_path) == 0
    written = write_synthetic_run(tmp_path)
    assert bare_read(tmp_path) == written == 1986
    assert bare_read(tmp_path, read_file_bytes) == written
