"""The neuromorphic/tuned arms: configs, checkpointed ingestion, resume, retrieval."""

from __future__ import annotations

from dataclasses import asdict, fields, replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from omegaconf import OmegaConf

from arms.neuromorphic.arm import NeuromorphicArm
from arms.neuromorphic.config import NeuromorphicConfig
from arms.neuromorphic.engine import MemoryEngine
from arms.neuromorphic.exchange import Exchange
from arms.neuromorphic.extract_rules import RuleExtractor
from arms.neuromorphic.extraction import Extraction
from arms.neuromorphic.records import Fact
from bench.arm import ArmServices
from bench.tokens import TokenCounter
from bench.types import Conversation, Question
from tests.arms.test_engine_support import HashEmbedder, conversation

CONF = Path(__file__).resolve().parents[2] / "conf" / "arm"


def _yaml(name: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((CONF / f"{name}.yaml").read_text())
    return data


def _composed_arm(name: str) -> dict[str, Any]:
    """The arm's options as Hydra composes them from conf/ (defaults lists applied)."""
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(CONF.parent), version_base="1.3"):
        cfg = compose("config")
    data: dict[str, Any] = OmegaConf.to_container(cfg.arm_options[name])  # type: ignore[assignment]
    return data


def test_arm_configs_list_every_field_and_differ_only_in_lambda_active() -> None:
    neuro, tuned = _composed_arm("neuromorphic"), _composed_arm("tuned")
    names = [f.name for f in fields(NeuromorphicConfig)]
    assert list(neuro) == names and sorted(tuned) == sorted(names)
    assert neuro == asdict(NeuromorphicConfig())
    diff = {k: (neuro[k], tuned[k]) for k in names if neuro[k] != tuned[k]}
    assert diff == {"lambda_active": (0.05, 0.005)}


def test_tuned_yaml_states_only_what_differs() -> None:
    tuned = _yaml("tuned")
    assert tuned.pop("defaults") == ["neuromorphic", "_self_"]
    assert tuned == {"lambda_active": 0.005}


def test_yaml_composes_into_the_typed_config() -> None:
    merged = OmegaConf.merge(OmegaConf.structured(NeuromorphicConfig), _composed_arm("tuned"))
    assert OmegaConf.to_object(merged) == NeuromorphicConfig(lambda_active=0.005)


def sample_conversation() -> Conversation:
    days = ["1:56 pm on 8 May, 2023", "10:00 am on 20 May, 2023", "3:00 pm on 2 June, 2023"]
    sessions = []
    for n, day in enumerate(days):
        turns = []
        for i in range(5):
            turns.append(("Ann", f"I painted picture number {n}{i} with bright colours yesterday."))
            cooked = f"I cooked dish number {n}{i} for my neighbours."
            tired = f"I am so tired right now after shift {i}."  # ephemeral: pruned soon
            turns.append(("Bob", tired if n == 0 else cooked))
        sessions.append((day, turns))
    sessions[1][1].append(("Ann", "I moved to Lisbon last month."))
    conv = conversation(sessions, cid="conv-x")
    questions = (
        Question("conv-x:0", "conv-x", "Where does Ann live?", 4, "Lisbon"),
        Question("conv-x:1", "conv-x", "When did Ann paint picture number 12?", 2, "19 May 2023"),
    )
    return replace(conv, questions=questions)


def _arm(store: Path, config: NeuromorphicConfig | None = None) -> NeuromorphicArm:
    services = ArmServices(HashEmbedder(), TokenCounter(), store, store)
    return NeuromorphicArm("neuromorphic", config or NeuromorphicConfig(flush_every=4), services)


def _answers(arm: NeuromorphicArm, conv: Conversation) -> list[str]:
    return [arm.retrieve(q).text for q in conv.questions]


def test_ingest_and_retrieve_give_a_facts_context(tmp_path: Path) -> None:
    conv = sample_conversation()
    arm = _arm(tmp_path)
    stats = arm.ingest(conv)
    assert stats["exchanges"] == stats["exchanges_total"] == 16 and stats["facts"] > 20
    assert stats["resumed_from"] == 0 and not stats["reopened"]
    ctx = arm.retrieve(conv.questions[1])
    assert ctx.text.startswith("<FACTS>")
    painted = "picture number 12 with bright colours yesterday (19 May 2023)."
    assert f"{painted} (valid 20 May 2023 – present)" in ctx.text  # the session's date
    assert all(item.kind == "fact" and item.source_ids for item in ctx.items)
    assert {sid for item in ctx.items for sid in item.source_ids} <= {
        t.dia_id for t in conv.turns()
    }
    assert ctx.meta["answer_type"] == "date" and sum(ctx.meta["found_by"].values()) > 0
    assert (tmp_path / "conv-x" / "checkpoint.json").is_file()
    assert (tmp_path / "conv-x" / "extraction_errors.json").read_text().strip() == "[]"
    arm.close()


def test_complete_store_is_reopened_not_rebuilt(tmp_path: Path) -> None:
    conv = sample_conversation()
    first = _arm(tmp_path)
    first.ingest(conv)
    expected = _answers(first, conv)
    built = _snapshot(first, "conv-x")
    first.close()
    second = _arm(tmp_path)
    second.extractor = Exploding(at_call=1)  # any extraction would fail the test
    stats = second.ingest(conv)
    # A complete store is opened read-only: the hot set replayed from the archive.
    assert stats["reopened"] and stats["resumed_from"] == 16 and stats["store"] == "archive"
    assert stats["pruned_deleted"] > 0  # deleted records must stay deleted in LanceDB
    assert _snapshot(second, "conv-x") == built
    assert _answers(second, conv) == expected
    second.close()
    with MemoryEngine(
        tmp_path / "conv-x",
        HashEmbedder(),
        NeuromorphicConfig(flush_every=4),
        conversation_id="conv-x",
    ) as writer:
        assert writer.loaded_from == "lancedb"  # reading left the hot table in sync
        assert writer.state.ws.snapshot() == built["ws"]


class Exploding(RuleExtractor):
    """The rule extractor, failing on its n-th call (same model and version)."""

    def __init__(self, at_call: int) -> None:
        self.at_call, self.calls = at_call, 0

    def extract(self, exchange: Exchange, known: Any) -> Extraction:
        self.calls += 1
        if self.calls == self.at_call:
            raise RuntimeError("extractor crashed")
        return super().extract(exchange, known)


def _snapshot(arm: NeuromorphicArm, cid: str) -> dict[str, Any]:
    engine = arm._engine(cid)
    return {
        "ws": engine.state.ws.snapshot(),
        "turn": engine.turn,
        "counters": dict(engine.counters),
    }


def test_resume_after_an_interrupted_ingestion_equals_an_uninterrupted_one(
    tmp_path: Path,
) -> None:
    conv = sample_conversation()
    clean = _arm(tmp_path / "clean")
    clean.ingest(conv)
    crashed = _arm(tmp_path / "crashed")
    crashed.extractor = Exploding(at_call=11)
    with pytest.raises(RuntimeError, match="extractor crashed"):
        crashed.ingest(conv)
    crashed.close()
    resumed = _arm(tmp_path / "crashed")
    stats = resumed.ingest(conv)
    assert stats["resumed_from"] == 8  # the last flush (every 4) before exchange 11
    assert _snapshot(resumed, "conv-x") == _snapshot(clean, "conv-x")
    assert _answers(resumed, conv) == _answers(clean, conv)
    resumed.close()
    clean.close()


def test_retrieve_does_not_mutate_unless_configured(tmp_path: Path) -> None:
    conv = sample_conversation()
    arm = _arm(tmp_path)
    arm.ingest(conv)
    before = _snapshot(arm, "conv-x")
    arm.retrieve(conv.questions[0])
    assert _snapshot(arm, "conv-x") == before
    arm.close()
    eager = _arm(tmp_path / "eager", NeuromorphicConfig(reinforce_on_query=True))
    eager.ingest(conv)
    before = _snapshot(eager, "conv-x")
    ctx = eager.retrieve(conv.questions[0])
    assert ctx.meta["reinforced"] and _snapshot(eager, "conv-x") != before
    eager.close()


def test_rank_sources_is_retrieve_ranking_without_rendering(tmp_path: Path) -> None:
    """Suites rank through `rank_sources`: the same ids as `retrieve`, the store untouched."""
    conv = sample_conversation()
    arm = _arm(tmp_path)
    arm.ingest(conv)
    before = _snapshot(arm, "conv-x")
    for question in conv.questions:
        ranked = arm.rank_sources(question)
        assert ranked and ranked == tuple(arm.retrieve(question).ranked_source_ids())
    assert _snapshot(arm, "conv-x") == before
    arm.close()


def test_fingerprint_names_params_models_and_code(tmp_path: Path) -> None:
    arm = _arm(tmp_path)
    fp = arm.fingerprint()
    assert fp["params"]["lambda_active"] == 0.05 and fp["embedder"] == "test-hash"
    assert fp["extractor"] == "offline-rules" and fp["armbench"] and len(fp["code"]) == 16
    tuned = _arm(tmp_path, NeuromorphicConfig(lambda_active=0.005)).fingerprint()
    assert tuned["params"]["lambda_active"] == 0.005 and tuned["code"] == fp["code"]


def test_a_store_built_under_other_params_is_rebuilt(tmp_path: Path) -> None:
    conv = sample_conversation()
    first = _arm(tmp_path)
    first.ingest(conv)
    first.close()
    other = _arm(tmp_path, NeuromorphicConfig(flush_every=4, lambda_active=0.005))
    stats = other.ingest(conv)
    assert stats["resumed_from"] == 0 and not stats["reopened"]
    other.close()


def test_retrieve_before_ingest_is_a_clear_error(tmp_path: Path) -> None:
    from bench.errors import BenchError

    with pytest.raises(BenchError, match="was not ingested"):
        _arm(tmp_path).retrieve(Question("q", "nope", "Where?", 4, "x"))


def test_known_facts_reach_the_extractor(tmp_path: Path) -> None:
    seen: list[list[Fact]] = []

    class Spy(RuleExtractor):
        def extract(self, exchange: Exchange, known: Any) -> Extraction:
            seen.append(list(known))
            return super().extract(exchange, known)

    arm = _arm(tmp_path, NeuromorphicConfig(extractor_context_k=3))
    arm.extractor = Spy()
    arm.ingest(sample_conversation())
    assert seen[0] == [] and all(len(k) <= 3 for k in seen) and any(seen[1:])
    arm.close()


def test_code_hash_covers_every_engine_module() -> None:
    from arms.neuromorphic.arm import ENGINE_MODULES

    package = Path(__file__).resolve().parents[2] / "arms" / "neuromorphic"
    # `perf` is the engine's benchmark harness: it builds nothing a store holds.
    modules = {p.stem for p in package.glob("*.py")} - {"__init__", "perf"}
    assert set(ENGINE_MODULES) == modules


@pytest.mark.parametrize(
    "module",
    ["bench.text", "bench.types", "bench.providers.offline_embed", "arms.neuromorphic.engine"],
)
def test_code_hash_changes_with_each_module_ingestion_depends_on(
    module: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib

    from arms.neuromorphic.arm import code_hash

    before = code_hash()
    loaded = importlib.import_module(module)
    edited = tmp_path / "edited.py"
    edited.write_text(Path(str(loaded.__file__)).read_text() + "\n# edited\n")
    monkeypatch.setattr(loaded, "__file__", str(edited))
    assert code_hash() != before


def test_module_file_is_where_import_would_load_the_module_from() -> None:
    import importlib

    from bench.arm.checkpoint import module_file

    name = "arms.neuromorphic.hotstore"
    expected = module_file(name)
    assert expected == Path(str(importlib.import_module(name).__file__))
    with pytest.raises(ValueError, match="no source file for module"):
        module_file("arms.neuromorphic.no_such_module")


def test_query_reinforcement_never_leaks_into_a_later_run(tmp_path: Path) -> None:
    conv = sample_conversation()
    eager = NeuromorphicConfig(flush_every=4, reinforce_on_query=True)
    first = _arm(tmp_path, eager)
    first.ingest(conv)
    ingested = _snapshot(first, "conv-x")
    contexts = _answers(first, conv)
    assert _snapshot(first, "conv-x") != ingested  # LTP at question time, persisted
    first.close()
    second = _arm(tmp_path, eager)
    second.extractor = Exploding(at_call=1)  # reused, not re-ingested
    stats = second.ingest(conv)
    assert stats["reopened"] and _snapshot(second, "conv-x") == ingested
    assert _answers(second, conv) == contexts
    second.close()
    third = _arm(tmp_path, eager)
    third.ingest(conv)
    assert _snapshot(third, "conv-x") == ingested and _answers(third, conv) == contexts
    third.close()
