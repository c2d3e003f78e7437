"""Synthetic long BEAM tiers (`bench.loaders.beam_synthetic`): seeded, upstream layout, never BEAM.

- the folder loads through `dataset=beam dataset.tier=10m dataset.path=…` and says
  synthetic in the dataset's name and every id;
- the same seed writes the same bytes; the token target is reached and the last copy cut;
- every question's evidence names its message in every copy, and the text there is the
  source message's text;
- a bad source is one line and exit 2.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.config import DatasetConfig
from bench.loaders import load_dataset
from bench.loaders.beam import load_beam
from bench.loaders.beam_synthetic import build, main
from bench.loaders.resolve import PROJECT_ROOT

FIXTURE = PROJECT_ROOT / "datasets" / "fixtures" / "beam"


def test_a_synthetic_tier_loads_as_beam_10m_and_says_synthetic(tmp_path: Path) -> None:
    manifest = build(FIXTURE, tmp_path / "syn", tokens=3000, conversations=2, seed=1)
    cfg = DatasetConfig(name="beam", loader="beam", path=str(tmp_path / "syn"), tier="10m")
    dataset = load_dataset(cfg)
    assert dataset.name == "beam-synthetic"
    assert [c.conversation_id for c in dataset.conversations] == [
        "beam-synthetic-10m-1",
        "beam-synthetic-10m-2",
    ]
    assert all(q.question_id.startswith("beam-synthetic-10m-") for q in dataset.questions())
    for n, conversation in enumerate(dataset.conversations, 1):
        figures = manifest["conversations"][str(n)]
        assert figures["tokens"] >= 3000 and len(conversation.turns()) == figures["messages"]
    assert manifest["synthetic"] is True and manifest["target_tokens"] == 3000


def test_the_same_seed_writes_the_same_bytes_and_another_seed_another_order(
    tmp_path: Path,
) -> None:
    first = build(FIXTURE, tmp_path / "a", tokens=2000, seed=0)
    build(FIXTURE, tmp_path / "b", tokens=2000, seed=0)
    other = build(FIXTURE, tmp_path / "c", tokens=20_000, seed=5)
    for name in ("chat.json", "probing_questions.json"):
        assert (tmp_path / "a" / "1" / name).read_bytes() == (
            tmp_path / "b" / "1" / name
        ).read_bytes()
    assert first["conversations"]["1"]["copies"] != other["conversations"]["1"]["copies"][:3]


def test_evidence_names_the_source_message_in_every_copy(tmp_path: Path) -> None:
    build(FIXTURE, tmp_path / "syn", tokens=4000)
    source = {c.conversation_id.rsplit("-", 1)[1]: c for c in load_beam(FIXTURE).conversations}
    synthetic = load_beam(tmp_path / "syn", "beam", "10m").conversations[0]
    texts = {t.dia_id: t.text for t in synthetic.turns()}
    plans = json.loads((tmp_path / "syn" / "1" / "chat.json").read_text(encoding="utf-8"))
    assert all(len(plan) == 1 and next(iter(plan)).startswith("copy-") for plan in plans)
    checked = 0
    for question in synthetic.questions:
        originals = [
            q for c in source.values() for q in c.questions if q.question == question.question
        ]
        assert originals, question.question
        wanted = {
            t.text for c in source.values() for t in c.turns() if t.dia_id in originals[0].evidence
        }
        for dia_id in question.evidence:
            assert texts[dia_id] in wanted
            checked += 1
    assert checked > 0


def test_a_missing_source_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(tmp_path / "out"), "--source", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: --source") and "\n" not in err


def test_scale_cuts_a_synthetic_tier_into_prefixes_that_keep_their_questions(
    tmp_path: Path,
) -> None:
    from bench.perf.scale import parse_settings, workloads

    build(FIXTURE, tmp_path / "syn", tokens=4000)
    settings = parse_settings(
        [f"scale.beam={tmp_path / 'syn'}", "scale.fractions=0.25,1", "scale.niah=[]"]
    )
    points, order = workloads(settings, tmp_path / "syn")
    assert [series for series, _ in points] == ["beam-synthetic", "beam-synthetic"]
    assert order == [] and points[0][1].name.startswith("beam-synthetic-10m-1-")
    small, whole = (suite for _, suite in points)
    assert small.queries and len(small.memories) < len(whole.memories)
    inside = {m.id for m in small.memories}
    assert all(set(q.relevance) <= inside for q in small.queries)
