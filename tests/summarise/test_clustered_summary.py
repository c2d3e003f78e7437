"""Clustered inference in the summary: identity on LongMemEval, LoCoMo clusters, Holm, reruns."""

from __future__ import annotations

import json
import random
from pathlib import Path

from bench.records import QuestionRecord
from bench.summarise import summarise_run
from bench.summarise.cli import main
from bench.summarise.clustered import HOST_KEY, clustered_paired
from bench.summarise.render_json import summary_to_json
from bench.summarise.stats import holm
from tests.summarise.test_summarise import arm, record, write_run

TYPES = ["temporal-reasoning", "knowledge-update", "multi-session"]


def longmemeval_run(run_dir: Path, n: int = 120) -> Path:
    """n LongMemEval questions (each its own haystack), three arms of different skill."""
    rng = random.Random(1)
    records = []
    for i in range(n):
        arms = {name: arm(rng.random() < skill, 1.0) for name, skill in SKILLS.items()}
        records.append(
            record(f"q{i:03d}", 1, arms, question_type=TYPES[i % 3], dataset="longmemeval_s")
        )
    return write_run(run_dir, records)


SKILLS = {"weak": 0.3, "mid": 0.5, "strong": 0.75}


def test_longmemeval_clustered_p_is_the_per_question_p(tmp_path: Path) -> None:
    """Each question its own cluster: every clustered p (and Holm) equals the McNemar one."""
    s = summarise_run(longmemeval_run(tmp_path))
    assert s.cluster_key == "conversation_id" and s.clusters == 120
    tests = [t for row in s.pairs for t in (row.pooled, *row.groups.values())]
    assert len(tests) > 6
    for t in tests:
        assert t.clustered is not None
        assert t.clustered.p == t.p and t.clustered.p_holm == t.p_holm
        assert t.clustered.k == t.n
    assert any(t.p < 1e-3 for t in tests)  # the identity is checked where it matters


def locomo_run(run_dir: Path) -> tuple[Path, list[QuestionRecord]]:
    """Six conversations of 20 questions; arm b is better on four of them."""
    rng = random.Random(2)
    records = []
    for c in range(6):
        for q in range(20):
            a_right = rng.random() < 0.4
            b_right = rng.random() < (0.7 if c < 4 else 0.3)
            arms = {"a": arm(a_right, 1.0), "b": arm(b_right, 1.0)}
            records.append(record(f"conv-{c}:{q}", 1 + q % 4, arms))
    return write_run(run_dir, records), records


def test_locomo_clusters_are_conversations_and_match_the_public_entry(tmp_path: Path) -> None:
    run, records = locomo_run(tmp_path)
    s = summarise_run(run)
    assert s.clusters == 6
    pooled = next(r.pooled for r in s.pairs if r.set == "scored")
    pairs = [
        (r.conversation_id, bool(r.arms["a"].correct), bool(r.arms["b"].correct)) for r in records
    ]
    expected = clustered_paired(pairs)
    assert pooled.clustered is not None
    assert pooled.clustered.p == expected.p and pooled.clustered.ci95 == expected.ci95
    assert pooled.clustered.deff == expected.deff and pooled.clustered.k == 6
    assert pooled.clustered.p >= 2 / 2**6 and pooled.clustered.p_min == 2 / 2**6
    family = [t.clustered for row in s.pairs for t in (row.pooled, *row.groups.values())]
    distinct = list({id(c): c for c in family if c is not None}.values())
    assert [c.p_holm for c in distinct] == holm([c.p for c in distinct])
    out = summary_to_json(s)
    assert out["clustering"]["key"] == "conversation_id" and out["clustering"]["k"] == 6
    assert out["pairs"][0]["clustered"]["p"] == pooled.clustered.p


def test_stitched_haystacks_cluster_on_their_host(tmp_path: Path) -> None:
    """LoCoMo-Plus: `plus-000@conv-26` and `plus-001@conv-26` share the conv-26 cluster."""
    recs = []
    for i, host in enumerate(["conv-1", "conv-1", "conv-2", "conv-2", "conv-2"]):
        r = record(f"plus-{i:03d}:causal", 1, {"a": arm(i % 2 == 0, 1.0), "b": arm(True, 1.0)})
        r.conversation_id = f"plus-{i:03d}@{host}"
        recs.append(r)
    s = summarise_run(write_run(tmp_path, recs))
    assert (s.cluster_key, s.clusters) == (HOST_KEY, 2)


def test_reruns_are_byte_identical_and_say_what_each_p_means(
    tmp_path: Path, capsys: object
) -> None:
    run, _ = locomo_run(tmp_path)
    outputs = []
    for fmt in ("--json", "--json", "--format=text", "--format=text"):
        assert main([str(run), fmt]) == 0
        outputs.append(capsys.readouterr().out)  # type: ignore[attr-defined]
    assert outputs[0] == outputs[1] and outputs[2] == outputs[3]
    data = json.loads(outputs[0])
    assert data["clustering"]["bootstrap"] == {"seed": 37, "b": 2000}
    assert data["pairs"][0]["clustered"]["bootstrap"] == {"seed": 37, "b": 2000}
    assert "generalises to these questions" in outputs[2]
    assert "generalises to conversations like these" in outputs[2]
    assert "cannot go below 2/2^6 = 0.031" in outputs[2]


def test_baseline_rows_and_the_comparable_export_carry_the_clustered_test(
    tmp_path: Path,
) -> None:
    from bench.summarise.comparable import comparable_export
    from bench.summarise.load import load_run
    from bench.summarise.summary import summarise_records

    run, records = locomo_run(tmp_path / "now")
    base_records = []
    for r in records:  # the baseline: arm b right everywhere arm a is
        flipped = record(r.question_id, r.category, {"b": arm(r.arms["a"].correct, 1.0)})
        base_records.append(flipped)
    base = write_run(tmp_path / "base", base_records)
    s = summarise_records(load_run(run), baseline=load_run(base))
    assert s.baseline is not None
    row = next(r for r in s.baseline if r.set == "scored")
    pairs = [
        (r.conversation_id, bool(r.arms["a"].correct), bool(r.arms["b"].correct)) for r in records
    ]
    expected = clustered_paired(pairs)
    assert row.pooled.clustered is not None
    assert (row.pooled.clustered.p, row.pooled.clustered.ci95) == (expected.p, expected.ci95)
    baseline_json = summary_to_json(s)["baseline"][0]
    assert baseline_json["clustered"]["k"] == 6
    export = comparable_export(s, load_run(run).records)
    assert export["clustering"]["key"] == "conversation_id"
    assert {e["cluster"] for e in export["submissions"][0]["evaluations"]} == {
        f"conv-{c}" for c in range(6)
    }
    assert export["paired"][0]["clustered"]["p"] == next(
        r.pooled.clustered.p for r in s.pairs if r.set == "scored" and r.pooled.clustered
    )
