"""An unreachable endpoint stops the run in seconds with its URL named (issue 8, item 7)."""

from __future__ import annotations

import json
import socket
import time
from collections import Counter
from pathlib import Path

import pytest

from bench.config import DatasetConfig, EndpointConfig, ProviderConfig, RunConfig
from bench.providers.probe import Probes
from tests.support.e2e_support import ROOT, last_line, run_cli
from tests.support.fault_server import Fault, FaultServer

SMOKE = ROOT / "datasets/fixtures/smoke_locomo.json"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])  # closed again when the block ends


def _openai_at(url: str, out: Path, timeout_s: float = 0.5) -> list[str]:
    return [
        "dataset=smoke",
        f"out={out}",
        "progress=false",
        "provider=openai",
        "arms=[raw]",
        f"provider.answerer.base_url={url}",
        f"provider.answerer.timeout_s={timeout_s}",
        f"provider.embedder.base_url={url}",
        "provider.embedder.model=fault-wordllama",
    ]


def test_a_closed_port_stops_the_run_in_seconds_naming_the_url(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    started = time.monotonic()
    proc = run_cli(*_openai_at(url, tmp_path / "run"), env={"OPENAI_API_KEY": "sk-x"})
    assert time.monotonic() - started < 30
    line = last_line(proc.stderr)
    assert proc.returncode == 2 and line.startswith("error: ") and url in line
    assert "refused" in line.lower() and "provider.answerer.base_url" in line
    assert not list((tmp_path / "run").glob("questions/*.json"))
    corrected = run_cli("dataset=smoke", f"out={tmp_path / 'run'}", "progress=false", "arms=[raw]")
    assert corrected.returncode == 0, last_line(corrected.stderr)  # the folder is not pinned


def test_a_listening_server_passes_the_probe_without_a_request(tmp_path: Path) -> None:
    with FaultServer() as server:
        proc = run_cli(
            *_openai_at(server.base_url, tmp_path / "run"), env={"OPENAI_API_KEY": "sk-x"}
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert all(r.path.endswith("/chat/completions") for r in server.requests)


@pytest.mark.slow
def test_a_rejected_key_stops_the_run_before_any_record(tmp_path: Path) -> None:
    """HTTP 401 on every call: one line naming the key's variable, exit 2, no record."""
    with FaultServer() as server:
        server.always(Fault.http(401, message="Incorrect API key provided"))
        proc = run_cli(
            *_openai_at(server.base_url, tmp_path / "run"), env={"OPENAI_API_KEY": "sk-wrong"}
        )
        posts = len(server.requests)
    line = last_line(proc.stderr)
    assert proc.returncode == 2 and line.startswith("error: "), proc.stderr[-2000:]
    assert "$OPENAI_API_KEY is rejected (HTTP 401" in line and "sk-wrong" not in proc.stderr
    assert posts == 0 and not list((tmp_path / "run").glob("questions/*.json"))
    assert "Traceback" not in proc.stderr


@pytest.mark.slow
@pytest.mark.parametrize("workers", ["workers=1", "workers=2"])
def test_a_model_the_server_does_not_have_stops_the_run_at_the_first_call(
    tmp_path: Path, workers: str
) -> None:
    """HTTP 404 to a chat call is permanent: no retry, one line, exit 2, no record.

    Every call gets the 404, so no unit writes a record; a second worker stops at its
    next step once the first 404 has stopped the run (`bench.run.scale.executor`). The
    timeout is generous: under load a 0.5 s one can time a call out, a transient
    failure that is retried and recorded rather than stopped on. The old flake was the
    no-retry check: the fixture asks one question twice, and whether both identical
    requests reach the server (or share one in flight) depends on timing.
    """
    with FaultServer() as server:
        server.always(Fault.http(404, message="The model `gpt-9` does not exist"))
        proc = run_cli(
            *_openai_at(server.base_url, tmp_path / "run", timeout_s=60),
            workers,
            env={"OPENAI_API_KEY": "sk-x"},
        )
        chats = [r for r in server.requests if r.path.endswith("/chat/completions")]
    line = last_line(proc.stderr)
    assert proc.returncode == 2 and line.startswith("error: "), proc.stderr[-2000:]
    assert "HTTP 404" in line and "fix the endpoint's model or base_url" in line
    assert "re-run the same command to retry" not in proc.stderr
    # no retry: no retry line, and no body sent more often than questions ask it (the
    # fixture asks "What color is Alice's bike?" twice; both may reach the server)
    assert chats and "retrying in" not in proc.stdout + proc.stderr
    asked = Counter(q["question"] for c in json.loads(SMOKE.read_text()) for q in c["qa"])
    sent = Counter(r.body["messages"][-1]["content"] for r in chats)
    assert all(n <= asked[text] for text, n in sent.items()), sent
    assert not list((tmp_path / "run").glob("questions/*.json"))


def test_evaluate_without_predictions_stops_in_one_line(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = run_cli("dataset=smoke", f"out={out}", "progress=false", "phase=evaluate")
    line = last_line(proc.stderr)
    assert proc.returncode == 2 and line.startswith("error: ") and "phase=predict" in line
    assert "Traceback" not in proc.stderr and not list(out.glob("questions/*.json"))


def _run_cfg(url: str) -> RunConfig:
    answerer = EndpointConfig(kind="openai", model="m", base_url=url)
    return RunConfig(
        dataset=DatasetConfig(),
        provider=ProviderConfig(answerer=answerer),
        arms=[],
        arm_options={},
        out="unused",
    )


def test_each_url_is_probed_once_until_the_probes_are_reset() -> None:
    """`Probes` owns what was probed: a second run skips the connect, `reset` forgets it."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        listener.settimeout(5)
        cfg = _run_cfg(f"http://127.0.0.1:{listener.getsockname()[1]}/v1")
        probes = Probes()
        probes.run(cfg)
        probes.run(cfg)
        listener.accept()[0].close()
        listener.settimeout(0.2)
        with pytest.raises(TimeoutError):
            listener.accept()  # the second run did not connect again
        probes.reset()
        probes.run(cfg)
        listener.settimeout(5)
        listener.accept()[0].close()
