"""The graphiti arm end to end with the real `graphiti-core` and `kuzu` (the `graphiti` extra).

Graphiti's LLM and embedder go through the run's accounting proxy to a local
deterministic OpenAI-compatible stub (tests/support/fault_server.py) that plays Graphiti's
extraction model (tests/support/graphiti_replies.py: one fact per turn). Skipped when
graphiti-core is not installed, or when armbench's entry points (the `graphiti`
plug-in) are not: `pip install -e '.[graphiti]'`, as .ci/run does.
"""

from __future__ import annotations

import importlib.util
import json
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from tests.support.e2e_support import load_records, run_cli
from tests.support.fault_server import Fault, FaultServer
from tests.support.graphiti_replies import SCHEMA_MARK, graphiti_chat_fn, smallest

if importlib.util.find_spec("graphiti_core") is None or importlib.util.find_spec("kuzu") is None:
    pytest.skip(
        "graphiti-core not installed: pip install -e '.[graphiti]'", allow_module_level=True
    )
if "graphiti" not in {ep.name for ep in metadata.entry_points(group="armbench.arms")}:
    pytest.skip(
        "armbench installed without its graphiti entry point: pip install -e '.[graphiti]'",
        allow_module_level=True,
    )

pytestmark = [pytest.mark.graphiti, pytest.mark.slow]  # e2e runs of 15-30 s each


def stub_provider(url: str) -> list[str]:
    """Overrides sending the extractor (so Graphiti's LLM) and the embedder to the stub."""
    return [
        "provider.extractor.kind=openai",
        "provider.extractor.model=stub-chat",
        f"+provider.extractor.base_url={url}",
        "provider.embedder.kind=openai",
        "provider.embedder.model=stub-embed",
        f"+provider.embedder.base_url={url}",
    ]


def extracts_nothing(messages: list[dict[str, Any]]) -> str:
    """A model that answers every schema with its smallest instance: no entity, no fact."""
    prompt = str(messages[-1].get("content", ""))
    schema = json.loads(prompt.split(SCHEMA_MARK, 1)[1]) if SCHEMA_MARK in prompt else {}
    return json.dumps(smallest(schema, schema.get("$defs", {})) if schema else {})


def test_smoke_paired_with_rag_counts_graphitis_own_tokens(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FaultServer(chat_fn=graphiti_chat_fn) as stub:
        done = run_cli(
            "dataset=smoke",
            "arms=[rag,graphiti]",
            f"out={out}",
            "progress=false",
            *stub_provider(stub.base_url),
        )
    assert done.returncode == 0, done.stderr[-3000:]
    records = load_records(out)
    assert len(records) == 16
    for record in records.values():
        assert set(record["arms"]) == {"rag", "graphiti"}
        ids = record["arms"]["graphiti"]["retrieved_ids"]  # facts mapped back to turns
        assert ids and all(i.startswith("D") and ":" in i for i in ids)
    run = json.loads((out / "run.json").read_text())
    roles = run["accounting"]["roles"]
    ingest = roles["proxy:graphiti:ingest"]
    assert ingest["prompt_tokens"] > 0 and ingest["completion_tokens"] > 0
    assert roles["proxy:graphiti:retrieve"]["calls"] == 16  # one query embedding per question
    summary = run_cli(str(out), module="bench.summarise").stdout
    assert "note: proxy graphiti ingest: " in summary
    assert "note: retrieval graphiti: 16 queries, 0 failed (0 timed out), 0 empty" in summary
    assert "probe stored 30" in summary  # one fact per turn: 26 + 4 turns


def test_a_model_that_extracts_nothing_is_caught_by_the_probe(tmp_path: Path) -> None:
    """Graphiti stores the episodes and raises nothing when no fact is extracted."""
    out = tmp_path / "run"
    with FaultServer(chat_fn=extracts_nothing) as stub:
        done = run_cli(
            "dataset=smoke",
            "arms=[rag,graphiti]",
            f"out={out}",
            "progress=false",
            *stub_provider(stub.base_url),
        )
    assert done.returncode == 1, done.stderr[-3000:]
    assert "post-ingestion probe (count) found nothing stored" in done.stderr
    summary = run_cli(str(out), module="bench.summarise").stdout
    assert "note: DEGRADED retrieval graphiti: 16 queries" in summary


def test_an_interrupted_ingestion_restarts_the_unit_without_duplicates(tmp_path: Path) -> None:
    """A run cut mid-ingestion, then resumed, holds what an uninterrupted run holds."""
    common = ("dataset=smoke", "arms=[graphiti]", "progress=false", "limit.conversations=1")
    with FaultServer(chat_fn=graphiti_chat_fn) as stub:
        whole = tmp_path / "whole"
        done = run_cli(*common, f"out={whole}", *stub_provider(stub.base_url))
        assert done.returncode == 0, done.stderr[-3000:]
        cut = tmp_path / "cut"
        stub.always(Fault.http(400, message="stop here"), after=60)  # 4xx: never retried
        first = run_cli(*common, f"out={cut}", *stub_provider(stub.base_url))
        assert first.returncode == 1 and "ingest failed" in first.stderr
        store = cut / "stores" / "graphiti" / "smoke-1"
        assert (store / "graph.kuzu").exists() and not (store / "checkpoint.json").exists()
        stub.always(None)
        again = run_cli(*common, f"out={cut}", *stub_provider(stub.base_url))
        assert again.returncode == 0, again.stderr[-3000:]
    state = json.loads((cut / "stores" / "graphiti" / "smoke-1" / "checkpoint.json").read_text())
    assert state["state"]["episodes"] == 26 and state["state"]["facts"] == 26  # none twice
    assert "probe stored 26" in run_cli(str(cut), module="bench.summarise").stdout
    ids = {q: r["arms"]["graphiti"]["retrieved_ids"] for q, r in load_records(whole).items()}
    assert ids == {q: r["arms"]["graphiti"]["retrieved_ids"] for q, r in load_records(cut).items()}
