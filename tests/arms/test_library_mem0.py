"""The mem0 arm end to end with the real `mem0ai` package (the `mem0` extra).

Mem0's LLM and embedder go through the run's accounting proxy to a local deterministic
OpenAI-compatible stub (tests/support/fault_server.py). The stub plays Mem0's extraction model:
it answers every chat call with Mem0's JSON shape, one memory per new message. Skipped
when mem0ai is not installed, or when armbench's entry points (the `mem0` plug-in) are
not: `pip install -e '.[mem0]'`, as .ci/run does.
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

if importlib.util.find_spec("mem0") is None:
    pytest.skip("mem0ai not installed: pip install -e '.[mem0]'", allow_module_level=True)
if "mem0" not in {ep.name for ep in metadata.entry_points(group="armbench.arms")}:
    pytest.skip(
        "armbench installed without its mem0 entry point: pip install -e '.[mem0]'",
        allow_module_level=True,
    )

pytestmark = [pytest.mark.mem0, pytest.mark.slow]  # e2e runs of 15-40 s each


def mem0_chat_fn(messages: list[dict[str, Any]]) -> str:
    """Mem0's extraction reply: `{"memory": [{"text": ...}]}`, one per new user message.

    Mem0 lists the new messages as `user: <content>` lines under `## New Messages`; any
    other chat call gets an empty memory list.
    """
    prompt = str(messages[-1].get("content", "")) if messages else ""
    new = prompt.partition("## New Messages\n")[2].partition("\n\n## ")[0]
    texts = [line[len("user: ") :] for line in new.splitlines() if line.startswith("user: ")]
    return json.dumps({"memory": [{"text": t} for t in texts]})


def stub_provider(url: str) -> list[str]:
    """Overrides sending the extractor (so Mem0's LLM) and the embedder to the stub."""
    return [
        "provider.extractor.kind=openai",
        "provider.extractor.model=stub-chat",
        f"+provider.extractor.base_url={url}",
        "provider.embedder.kind=openai",
        "provider.embedder.model=stub-embed",
        f"+provider.embedder.base_url={url}",
    ]


def test_smoke_paired_with_rag_counts_mem0s_own_tokens(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FaultServer(chat_fn=mem0_chat_fn) as stub:
        done = run_cli(
            "dataset=smoke",
            "arms=[rag,mem0]",
            f"out={out}",
            "progress=false",
            *stub_provider(stub.base_url),
        )
        chats = [r for r in stub.requests if r.path.endswith("/chat/completions")]
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(chats) == 30  # one extraction per turn: 26 + 4 turns in the smoke set
    records = load_records(out)
    assert len(records) == 16
    for record in records.values():
        assert set(record["arms"]) == {"rag", "mem0"}
        ids = record["arms"]["mem0"]["retrieved_ids"]  # memories mapped back to turns
        assert ids and all(i.startswith("D") and ":" in i for i in ids)
    run = json.loads((out / "run.json").read_text())
    roles = run["accounting"]["roles"]
    ingest = roles["proxy:mem0:ingest"]
    assert ingest["prompt_tokens"] > 0 and ingest["completion_tokens"] > 0
    assert roles["proxy:mem0:retrieve"]["calls"] == 16  # one query embedding per question
    summary = run_cli(str(out), module="bench.summarise").stdout
    assert "note: proxy mem0 ingest: " in summary
    assert "note: retrieval mem0: 16 queries, 0 failed (0 timed out), 0 empty" in summary
    assert "probe stored 30" in summary  # one memory per turn, each found by the count


def test_a_model_that_extracts_nothing_is_caught_by_the_probe(tmp_path: Path) -> None:
    """Mem0 raises nothing when its LLM's reply holds no memory: the run must say so."""
    out = tmp_path / "run"
    with FaultServer(chat_fn=lambda _messages: "no JSON here") as stub:
        done = run_cli(
            "dataset=smoke",
            "arms=[rag,mem0]",
            f"out={out}",
            "progress=false",
            *stub_provider(stub.base_url),
        )
    assert done.returncode == 1, done.stderr[-3000:]
    assert "post-ingestion probe (count) found nothing stored" in done.stderr
    summary = run_cli(str(out), module="bench.summarise").stdout
    assert "note: DEGRADED retrieval mem0: 16 queries, 0 failed (0 timed out), 16 empty" in summary


def test_an_interrupted_ingestion_restarts_the_unit_without_duplicates(tmp_path: Path) -> None:
    """A run cut mid-ingestion, then resumed, holds what an uninterrupted run holds."""
    common = ("dataset=smoke", "arms=[mem0]", "progress=false", "limit.conversations=1")
    with FaultServer(chat_fn=mem0_chat_fn) as stub:
        whole = tmp_path / "whole"
        done = run_cli(*common, f"out={whole}", *stub_provider(stub.base_url))
        assert done.returncode == 0, done.stderr[-3000:]
        cut = tmp_path / "cut"
        stub.always(Fault.http(400, message="stop here"), after=20)  # 4xx: never retried
        first = run_cli(*common, f"out={cut}", *stub_provider(stub.base_url))
        assert first.returncode == 1 and "ingest failed" in first.stderr
        store = cut / "stores" / "mem0" / "smoke-1"
        assert (store / "qdrant").is_dir() and not (store / "checkpoint.json").exists()
        stub.always(None)
        again = run_cli(*common, f"out={cut}", *stub_provider(stub.base_url))
        assert again.returncode == 0, again.stderr[-3000:]
    assert "probe stored 26" in run_cli(str(cut), module="bench.summarise").stdout
    ids = {q: r["arms"]["mem0"]["retrieved_ids"] for q, r in load_records(whole).items()}
    assert ids == {q: r["arms"]["mem0"]["retrieved_ids"] for q, r in load_records(cut).items()}
