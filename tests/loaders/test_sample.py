"""Seeded stratified samples (`limit.per_category`, `limit.fraction`, `limit.seed`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from bench.config import LimitConfig
from bench.errors import ConfigError
from bench.loaders import load_dataset
from bench.loaders.sample import quota, sample_dataset, stratum
from bench.summarise import summarise_run
from bench.summarise.render import render_text
from bench.types import Dataset
from tests.run.test_settings import compose_run
from tests.support.e2e_support import ROOT, last_line, run_cli

SHARED = Path(os.environ.get("BENCH_DATA_DIR") or ROOT.parent / "shared" / "data")

IDS_SCRIPT = """
import json, sys
from bench.loaders import load_dataset
from bench.run.pipeline import limit_dataset
from tests.run.test_settings import compose_run
cfg = compose_run(*sys.argv[1:])
dataset = limit_dataset(load_dataset(cfg.dataset), cfg)
print(json.dumps([q.question_id for q in dataset.questions()]))
"""


def smoke(*overrides: str) -> Dataset:
    """The LoCoMo-format smoke fixture (16 questions, 5 categories)."""
    return load_dataset(compose_run("dataset=smoke", *overrides).dataset)


def test_per_category_keeps_n_of_each_category_in_file_order() -> None:
    full = smoke()
    sampled = sample_dataset(full, LimitConfig(per_category=2, seed=0))
    counts = Counter(stratum(q) for q in sampled.questions())
    offered = Counter(stratum(q) for q in full.questions())
    assert counts == {k: min(2, n) for k, n in offered.items()}
    order = [q.question_id for q in full.questions()]
    kept = [q.question_id for q in sampled.questions()]
    assert kept == [i for i in order if i in set(kept)]  # file order kept
    assert sampled.sample is not None and sampled.sample.kept == len(kept)
    assert sampled.sample.offered == len(order)


def test_seed_changes_the_draw_and_smaller_samples_nest() -> None:
    full = smoke()
    ids = {}
    for n in (1, 3):
        for seed in range(4):
            drawn = sample_dataset(full, LimitConfig(per_category=n, seed=seed))
            ids[n, seed] = {q.question_id for q in drawn.questions()}
    assert all(ids[1, s] <= ids[3, s] for s in range(4))  # same seed: nested
    assert len({frozenset(ids[3, s]) for s in range(4)}) > 1  # the seed matters


def test_fraction_is_exact_ceil_per_category() -> None:
    assert quota(LimitConfig(fraction=0.1), 50) == 5  # not ceil(5.000000000000001)
    assert quota(LimitConfig(fraction=0.1), 51) == 6
    assert quota(LimitConfig(fraction=1.0), 7) == 7
    full = smoke()
    sampled = sample_dataset(full, LimitConfig(fraction=0.5, seed=3))
    offered = Counter(stratum(q) for q in full.questions())
    assert Counter(stratum(q) for q in sampled.questions()) == {
        k: -(-n // 2) for k, n in offered.items()
    }


@pytest.mark.parametrize(
    ("limit", "fix"),
    [
        (LimitConfig(per_category=0), "positive integer"),
        (LimitConfig(fraction=0.0), "(0, 1]"),
        (LimitConfig(fraction=1.5), "(0, 1]"),
        (LimitConfig(per_category=2, fraction=0.1), "choose one"),
        (LimitConfig(per_category=2, questions=3), "set limit.questions=null"),
    ],
)
def test_bad_sample_options_are_one_line_errors(limit: LimitConfig, fix: str) -> None:
    with pytest.raises(ConfigError, match=fix.replace("(", r"\(").replace("]", r"\]")):
        sample_dataset(smoke(), limit)


def test_cli_refuses_bad_sample_in_one_line(tmp_path: Path) -> None:
    proc = run_cli("dataset=smoke", "arms=[raw]", "limit.fraction=2", f"out={tmp_path}")
    assert proc.returncode == 2, proc.stderr
    assert last_line(proc.stderr).startswith("error: limit.fraction=2.0: must be in (0, 1]")
    assert "Traceback" not in proc.stderr


@pytest.mark.skipif(not (SHARED / "locomo10.json").is_file(), reason="no locomo10.json offline")
@pytest.mark.slow
def test_locomo_sample_is_identical_across_processes_and_hash_seeds() -> None:
    args = ["dataset=locomo", "dataset.errata=null", "limit.per_category=20", "limit.seed=0"]
    draws = []
    for hash_seed in ("1", "271828"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed, "BENCH_DATA_DIR": str(SHARED)}
        proc = subprocess.run(
            [sys.executable, "-c", IDS_SCRIPT, *args],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
        draws.append(json.loads(proc.stdout))
    assert draws[0] == draws[1]
    assert len(draws[0]) == len(set(draws[0])) == 100
    full = load_dataset(compose_run(*args[:2]).dataset)
    category = {q.question_id: q.category for q in full.questions()}
    assert Counter(category[i] for i in draws[0]) == {c: 20 for c in (1, 2, 3, 4, 5)}


def test_sampled_run_records_the_sample_and_the_summary_says_so(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = run_cli(
        "dataset=smoke",
        "arms=[raw]",
        "limit.per_category=1",
        "limit.seed=7",
        f"out={out}",
        "progress=false",
    )
    assert proc.returncode == 0, proc.stderr
    sample = json.loads((out / "run.json").read_text())["sample"]
    assert sample["seed"] == 7 and sample["questions"] == 5 and sample["of"] == 16
    assert set(sample["strata"]) == {"1", "2", "3", "4", "5"}
    assert len(list((out / "questions").glob("*.json"))) == 5
    text = render_text(summarise_run(out))
    assert "SAMPLE: 5 of 16 questions, 1 per category (seed 7" in text


def test_unsampled_run_json_has_no_sample_key(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = run_cli("dataset=smoke", "arms=[raw]", "limit.questions=2", f"out={out}")
    assert proc.returncode == 0, proc.stderr
    assert "sample" not in json.loads((out / "run.json").read_text())
    assert "SAMPLE" not in render_text(summarise_run(out))


@pytest.mark.parametrize("dataset", ["smoke_longmemeval", "smoke_beam"])
def test_longmemeval_and_beam_are_stratified_by_type_and_ability(dataset: str) -> None:
    """LongMemEval's question type and BEAM's ability (both `question_type`) are the strata."""
    full = load_dataset(compose_run(f"dataset={dataset}").dataset)
    sampled = sample_dataset(full, LimitConfig(per_category=1, seed=0))
    types = [q.question_type for q in sampled.questions()]
    assert sorted(map(str, types)) == sorted({str(q.question_type) for q in full.questions()})
    assert sampled.sample is not None
    assert {k for k, _, _ in sampled.sample.strata} == set(types)
