"""BEAM and LoCoMo-Plus as suites: messages are memories, evidence ids are relevance.

Fixtures always; the shared upstream copies when `BENCH_DATA_DIR` holds them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from bench.errors import BenchError, ConfigError
from bench.loaders import load_locomo
from bench.loaders.locomo_plus import load_locomo_plus
from bench.suite.adapters import load_suites
from bench.suite.adapters.beam import tier_label
from bench.suite.adapters.locomo_plus import dataset_suites
from bench.suite.model import Suite
from tests.support.e2e_support import ROOT, run_cli

FIX = ROOT / "datasets/fixtures"
DATA = Path(os.environ.get("BENCH_DATA_DIR", "/nonexistent"))
BEAM_128K = DATA / "beam-100k"
PLUS = DATA / "locomo-plus" / "locomo_plus.json"
ITEMS = [
    {
        "relation_type": rel,
        "cue_dialogue": f"A: I decided to {verb} every weekend.\nB: That sounds good.",
        "trigger_query": f"A: Guess what I did on Saturday, {verb} again.",
        "time_gap": "two weeks later",
    }
    for rel, verb in (("causal", "swim"), ("goal", "paint"), ("state", "cook"), ("value", "hike"))
]


def _raw_questions(folder: Path) -> dict[str, Any]:
    flat = folder / "probing_questions.json"
    path = flat if flat.is_file() else folder / "probing_questions" / "probing_questions.json"
    return dict(json.loads(path.read_text(encoding="utf-8")))


def _flat_ids(raw: Any) -> set[str]:
    """Every id in a `source_chat_ids` value (list, list of lists, object of lists)."""
    if raw is None:
        return set()
    if isinstance(raw, dict):
        return set().union(*(_flat_ids(v) for v in raw.values()))
    if isinstance(raw, list):
        return set().union(set(), *(_flat_ids(v) for v in raw))
    return {str(raw)}


def _message_ids(folder: Path) -> list[str]:
    text = (folder / "chat.json").read_text(encoding="utf-8")
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "role" in node and "id" in node:
                found.append(str(node["id"]))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(json.loads(text))
    return found


def _check_beam(suites: list[Suite], root: Path) -> int:
    """Every suite against its own files, read here independently; returns the queries."""
    queries = 0
    for suite in suites:
        folder = root / suite.name.rsplit("-", 1)[1]
        ids = _message_ids(folder)
        assert [m.id for m in suite.memories] == ids
        raw = _raw_questions(folder)
        for query in suite.queries:
            _, ability, index = query.query_id.split(":")
            item = raw[ability][int(index.removesuffix("_abs"))]
            assert query.question_type == ability and query.text == item["question"]
            if ability == "abstention":
                assert query.abstention and not query.relevance
            else:
                assert query.relevance
                assert set(query.relevance) <= _flat_ids(item.get("source_chat_ids")) & set(ids)
        queries += len(suite.queries)
    return queries


def test_beam_fixture_messages_are_memories_and_source_ids_relevant() -> None:
    suites = load_suites("beam", FIX / "beam", "test")
    assert [s.name for s in suites] == ["beam-128k-1", "beam-128k-2"]
    assert {s.kind for s in suites} == {"beam"}
    assert _check_beam(suites, FIX / "beam") == 7
    first = suites[0]
    ordering = next(q for q in first.queries if q.question_type == "event_ordering")
    assert list(ordering.relevance) == ["0", "6", "12"]  # `[[0],[6,6],12]`, in order, once
    update = next(q for q in first.queries if q.question_type == "knowledge_update")
    assert len(update.relevance) == 2  # both groups of the object: original and update
    assert first.memories[0].date == "January-10-2024" and first.memories[0].session == "1"
    assert first.memories[0].text.endswith("->-> 1,1")  # kept verbatim


def test_beam_tier_label_from_split_then_folder() -> None:
    assert tier_label(Path("/x/beam-100k"), "test") == "128k"
    assert tier_label(Path("/x/1M"), "test") == "1m"
    assert tier_label(Path("/x/beam-10m"), "test") == "10m"
    assert tier_label(Path("/x/beam-100k"), "500K") == "500k"
    assert tier_label(Path("/x/anything"), "test") == "128k"


def test_beam_bad_folder_is_one_dataset_error(tmp_path: Path) -> None:
    (tmp_path / "1").mkdir()
    (tmp_path / "1" / "chat.json").write_text('{"not": "a list"}')
    (tmp_path / "1" / "probing_questions.json").write_text("{}")
    with pytest.raises(BenchError, match=r"chat.json"):
        load_suites("beam", tmp_path, "test")


@pytest.mark.skipif(not BEAM_128K.is_dir(), reason="BEAM 128K tier not present")
def test_beam_128k_shared_copy_as_suites() -> None:
    suites = load_suites("beam", BEAM_128K, "test")
    assert len(suites) == 20
    queries = _check_beam(suites, BEAM_128K)
    # 400 probing questions; 5 whose source_chat_ids name no message of their chat are
    # skipped rather than scored as misses
    assert queries == 395
    types = {q.question_type for s in suites for q in s.queries}
    assert len(types) == 10


def _plus(tmp_path: Path, seed: int) -> list[Suite]:
    items = tmp_path / "locomo_plus.json"
    items.write_text(json.dumps(ITEMS))
    base = load_locomo(FIX / "smoke_locomo.json").conversations
    return dataset_suites(load_locomo_plus(items, base, seed))


def test_locomo_plus_items_become_seeded_suites_with_cue_relevance(tmp_path: Path) -> None:
    suites = _plus(tmp_path, 0)
    assert len(suites) == len(ITEMS) and {s.kind for s in suites} == {"locomo_plus"}
    for suite, item in zip(suites, ITEMS, strict=True):
        (query,) = suite.queries
        assert query.question_type == item["relation_type"]
        assert list(query.relevance) == ["CUE:1", "CUE:2"]
        cue = {m.id: m.text for m in suite.memories if m.id.startswith("CUE:")}
        assert cue == {
            "CUE:1": item["cue_dialogue"].split("\n")[0][3:],
            "CUE:2": "That sounds good.",
        }
        assert query.text.endswith(item["trigger_query"][3:]) and query.date
    again = _plus(tmp_path, 0)
    assert [s.name for s in again] == [s.name for s in suites]
    assert again == suites


def test_locomo_plus_seed_picks_the_hosts(tmp_path: Path) -> None:
    names = {seed: [s.name for s in _plus(tmp_path, seed)] for seed in range(6)}
    assert len({tuple(v) for v in names.values()}) > 1  # some seed stitches elsewhere


def test_locomo_plus_without_seed_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"suite.seed=null"):
        load_suites("locomo_plus", FIX / "smoke_locomo.json", "test", None)


@pytest.mark.slow
@pytest.mark.skipif(not PLUS.is_file(), reason="locomo_plus.json not present")
def test_locomo_plus_shared_copy_is_the_same_for_a_seed() -> None:
    first = load_suites("locomo_plus", PLUS, "test", 0)
    assert len(first) == 401
    assert all(list(s.queries[0].relevance)[0] == "CUE:1" for s in first)
    assert [s.name for s in load_suites("locomo_plus", PLUS, "test", 0)] == [s.name for s in first]
    assert [s.name for s in load_suites("locomo_plus", PLUS, "test", 1)] != [s.name for s in first]


@pytest.mark.slow
def test_beam_fixture_runs_through_bench_suite(tmp_path: Path) -> None:
    out = tmp_path / "beam"
    proc = run_cli(
        f"suite.path={FIX / 'beam'}",
        "suite.adapter=beam",
        "arms=[rag,neuromorphic]",
        f"out={out}",
        "progress=false",
        module="bench.suite",
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads((out / "report.json").read_text())
    assert report["suite"]["queries"] == 7
    for arm in ("rag", "neuromorphic"):
        # 14 + 4 memories: every relevant id is within the top 20 of any ranking
        assert report["arms"][arm]["retrieval"]["byK"]["20"]["recall"] == 1.0


def test_suite_limits_are_bench_runs_on_every_adapter(tmp_path: Path) -> None:
    """`limit.conversations` and `limit.questions` cut LoCoMo-Plus suites as bench.run does."""
    from bench.config import LimitConfig
    from bench.suite.adapters import limit_suites

    suites = _plus(tmp_path, 0)
    assert len(suites) >= 3
    assert limit_suites(suites, LimitConfig(conversations=2)) == suites[:2]
    cut = limit_suites(suites, LimitConfig(questions=1))
    assert [s.name for s in cut] == [suites[0].name]


def test_bench_suite_takes_limit_overrides(tmp_path: Path) -> None:
    """Before: "Could not override 'limit.conversations'... use +limit..." (wrong advice)."""
    from hydra import compose, initialize_config_dir

    from bench.paths import CONF_DIR
    from bench.suite.config import load_suite_config

    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose(
            config_name="suite",
            overrides=["suite.adapter=locomo_plus", "suite.path=x", "limit.conversations=3"],
        )
    assert load_suite_config(cfg).limit.conversations == 3
