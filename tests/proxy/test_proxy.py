"""The accounting proxy: the openai SDK through armbench's providers, per arm and phase.

A local deterministic OpenAI-compatible stub (tests/support/fault_server.py) stands in for the
provider; the openai SDK, pointed at the proxy, is what a memory library would use.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from bench.config import CacheConfig, EmbedderConfig, EndpointConfig, ProviderConfig
from bench.providers.factory import build_providers
from bench.providers.proxy import MAX_EMBED_INPUTS, BadRequest, call_embed
from bench.providers.roles import proxy_notes
from tests.support.e2e_support import ROOT, last_line, run_cli
from tests.support.fault_replies import echo_chat_fn
from tests.support.fault_server import FaultServer


def _session(cfg: ProviderConfig, run_dir: Path) -> tuple[list[Any], dict[str, Any]]:
    """One run's worth of library calls through the proxy: replies and the accounting."""
    providers = build_providers(cfg, run_dir)
    try:
        replies: list[Any] = []
        for arm, phase, text in (
            ("mem0", "ingest", "remember Lisbon"),
            ("mem0", "retrieve", "where?"),
            ("cognee", "ingest", "remember Porto"),
        ):
            client = openai.OpenAI(
                base_url=providers.proxy_url(arm, phase), api_key="x", max_retries=0
            )
            chat = client.chat.completions.create(
                model="ignored", messages=[{"role": "user", "content": text}]
            )
            replies.append(chat.choices[0].message.content)
            if phase == "ingest":
                vectors = client.embeddings.create(model="ignored", input=[text, "other"])
                replies.append([len(d.embedding) for d in vectors.data])
        return replies, providers.accounting()
    finally:
        providers.close()


def test_sdk_calls_are_answered_accounted_per_arm_and_phase_and_cached(tmp_path: Path) -> None:
    with FaultServer(chat_fn=echo_chat_fn) as stub:
        endpoint = EndpointConfig(kind="openai", model="stub-chat", base_url=stub.base_url)
        embedder = EmbedderConfig(
            kind="openai", model="stub-embed", base_url=stub.base_url, dim=256
        )
        cfg = ProviderConfig(
            answerer=endpoint, extractor=endpoint, embedder=embedder, cache=CacheConfig("readwrite")
        )
        replies, first = _session(cfg, tmp_path)
        served = len(stub.requests)
        again, second = _session(cfg, tmp_path)
        assert len(stub.requests) == served  # the rerun never reached the provider
    assert (
        replies
        == again
        == ["echo: remember Lisbon", [256, 256], "echo: where?", "echo: remember Porto", [256, 256]]
    )
    roles = first["roles"]
    assert sorted(roles) == ["proxy:cognee:ingest", "proxy:mem0:ingest", "proxy:mem0:retrieve"]
    for role in roles.values():
        assert role["prompt_tokens"] > 0 and role["cache_hits"] == 0
    assert roles["proxy:mem0:retrieve"]["completion_tokens"] > 0
    assert roles["proxy:mem0:ingest"]["calls"] == 2  # one chat, one embedding batch
    assert first["phases"]["proxy:ingest"]["calls"] == 4
    for role in second["roles"].values():
        assert role["cache_hits"] == role["calls"] and role["prompt_tokens"] == 0
    notes = proxy_notes(first)
    assert notes[0].startswith("proxy cognee ingest: 2 calls (0 cached), ")


def test_offline_runs_answer_from_the_offline_models(tmp_path: Path) -> None:
    replies, accounting = _session(ProviderConfig(cache=CacheConfig("off")), tmp_path)
    assert isinstance(replies[0], str) and replies[1] == [256, 256]  # offline reader, WordLlama
    assert accounting["roles"]["proxy:mem0:ingest"]["calls"] == 2
    assert accounting["total"]["http_requests"] == 0  # in-process models: no network at all


def test_bad_paths_and_bodies_get_openai_style_errors(tmp_path: Path) -> None:
    providers = build_providers(ProviderConfig(cache=CacheConfig("off")), tmp_path)
    try:
        url = providers.proxy_url("mem0", "ingest")
        base = url.split("/arm/")[0]
        wrong = httpx.post(f"{base}/arm/mem0/answer/v1/chat/completions", json={})
        assert wrong.status_code == 404 and wrong.json()["error"]["type"] == "not_found"
        served = httpx.get(f"{url}/models").json()["data"][0]["id"]
        assert served == "offline-extractive"  # the offline answerer serves an offline run
        bad = httpx.post(f"{url}/chat/completions", json={"messages": "hi"})
        assert bad.status_code == 400 and "`messages` list" in bad.json()["error"]["message"]
        with pytest.raises(ValueError, match="plain arm name"):
            providers.proxy_url("../x", "ingest")
    finally:
        providers.close()


def test_the_cli_serves_until_stopped_and_writes_its_accounting(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "bench.proxy", "--port", "0", "--out", str(tmp_path)],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        base = line.split(" on ", 1)[1].split("/arm/")[0]
        client = openai.OpenAI(base_url=f"{base}/arm/mine/ingest/v1", api_key="x", max_retries=0)
        client.embeddings.create(model="ignored", input="hello")
        assert httpx.get(f"{base}/accounting").json()["roles"]["proxy:mine:ingest"]["calls"] == 1
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    assert proc.returncode == 0
    saved = json.loads((tmp_path / "proxy_accounting.json").read_text())
    assert saved["roles"]["proxy:mine:ingest"]["phase"] == "proxy:ingest"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["provider=opnai"], "error: unknown provider 'opnai' in provider=opnai; did you mean "
                             "'openai'?"),
        (["--port", "99999"], "error: --port 99999 on 127.0.0.1: "),
    ],
)  # fmt: skip
def test_the_cli_rejects_bad_input_in_one_line(args: list[str], expected: str) -> None:
    done = run_cli(*args, module="bench.proxy")
    assert done.returncode == 2
    assert last_line(done.stderr).startswith(expected)
    assert "Traceback" not in done.stderr


LIBRARY_ARM = '''"""libarm: a memory library calling an LLM itself (through the proxy)."""

from dataclasses import dataclass
from typing import Any

import openai

from bench.types import Context, ContextItem, Conversation, Question


@dataclass
class LibConfig:
    """Options."""

    kind: str = "libarm"
    """Always `libarm`."""


class LibArm:
    """Summarises each session with the run's LLM via the proxy; returns the summaries."""

    config_class = LibConfig

    def __init__(self, name: str, config: LibConfig, services: Any) -> None:
        self.name, self.services, self.notes = name, services, []

    def _client(self, phase: str) -> Any:
        url = self.services.llm_proxy(self.name, phase)
        return openai.OpenAI(base_url=url, api_key="x")

    def fingerprint(self) -> dict[str, Any]:
        return {"kind": "libarm"}

    def ingest(self, conversation: Conversation) -> dict[str, Any]:
        client = self._client("ingest")
        self.notes = []
        for turn in conversation.turns()[:4]:
            reply = client.chat.completions.create(
                model="any", messages=[{"role": "user", "content": turn.text}]
            )
            self.notes.append((turn.dia_id, reply.choices[0].message.content or ""))
        return {"stored": len(self.notes)}

    def retrieve(self, question: Question) -> Context:
        self._client("retrieve").embeddings.create(model="any", input=question.question)
        items = tuple(ContextItem(text, 1.0, (dia,)) for dia, text in self.notes)
        return Context(text="\\n".join(i.text for i in items), items=items)

    def close(self) -> None:
        pass
'''


@pytest.mark.slow
def test_a_run_starts_the_proxy_for_an_arm_and_reports_its_tokens(tmp_path: Path) -> None:
    from tests.support.plugin_install import install_plugin

    project = tmp_path / "project"
    (project / "armbench_libarm" / "conf" / "arm").mkdir(parents=True)
    (project / "armbench_libarm" / "__init__.py").write_text(LIBRARY_ARM, encoding="utf-8")
    (project / "armbench_libarm" / "conf" / "arm" / "libarm.yaml").write_text("kind: libarm\n")
    (project / "pyproject.toml").write_text(
        '[project]\nname = "armbench-libarm"\nversion = "0.1"\n\n'
        '[project.entry-points."armbench.arms"]\nlibarm = "armbench_libarm:LibArm"\n'
    )
    install_plugin(project, tmp_path / "site")
    env = {"PYTHONPATH": f"{ROOT}:{tmp_path / 'site'}"}
    out = tmp_path / "run"
    with FaultServer(chat_fn=echo_chat_fn) as stub:
        extractor = [
            "provider.extractor.kind=openai",
            "provider.extractor.model=stub",
            f"+provider.extractor.base_url={stub.base_url}",
        ]
        done = run_cli(
            "dataset=smoke",
            "arms=[rag,libarm]",
            f"out={out}",
            "progress=false",
            *extractor,
            env=env,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        assert len(stub.requests) == 8  # the first 4 turns of each smoke conversation
    roles = json.loads((out / "run.json").read_text())["accounting"]["roles"]
    ingest, retrieve = roles["proxy:libarm:ingest"], roles["proxy:libarm:retrieve"]
    assert ingest["calls"] == 8 and ingest["prompt_tokens"] > 0
    assert retrieve["calls"] == 16  # one embedding per question (WordLlama: offline)
    assert "proxy:rag:ingest" not in roles  # rag never asked for the proxy
    summary = run_cli(str(out), module="bench.summarise")
    assert "note: proxy libarm ingest: 8 calls (0 cached)" in summary.stdout


class CountingEmbedder:
    """An embedder that counts the texts it is asked for (zero vectors)."""

    model, dim = "counting", 4

    def __init__(self) -> None:
        self.texts = 0

    def embed(self, texts: list[str]) -> Any:
        import numpy as np

        self.texts += len(texts)
        return np.zeros((len(texts), self.dim), dtype=np.float32)


def test_an_embeddings_request_is_bounded_by_inputs_not_only_by_bytes() -> None:
    embedder = CountingEmbedder()
    reply = call_embed(embedder, {"input": ["x"] * MAX_EMBED_INPUTS})
    assert len(reply["data"]) == MAX_EMBED_INPUTS  # type: ignore[arg-type]
    with pytest.raises(BadRequest, match=f"of {MAX_EMBED_INPUTS + 1} inputs: send at most"):
        call_embed(embedder, {"input": ["x"] * (MAX_EMBED_INPUTS + 1)})  # ~5 KB of body
    assert embedder.texts == MAX_EMBED_INPUTS  # the refused request embedded nothing
