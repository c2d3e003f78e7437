"""An unreachable endpoint stops the run in seconds with its URL named (issue 8, item 7)."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import pytest

from tests.support.e2e_support import last_line, run_cli
from tests.support.fault_server import Fault, FaultServer


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])  # closed again when the block ends


def _openai_at(url: str, out: Path) -> list[str]:
    return [
        "dataset=smoke", f"out={out}", "progress=false", "provider=openai", "arms=[raw]",
        f"provider.answerer.base_url={url}", "provider.answerer.timeout_s=0.5",
        f"provider.embedder.base_url={url}", "provider.embedder.model=fault-wordllama",
    ]  # fmt: skip


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
    """HTTP 404 to a chat call is permanent: no retry, one line, exit 2, no record."""
    with FaultServer() as server:
        server.always(Fault.http(404, message="The model `gpt-9` does not exist"))
        proc = run_cli(
            *_openai_at(server.base_url, tmp_path / "run"), workers,
            env={"OPENAI_API_KEY": "sk-x"},
        )  # fmt: skip
        chats = [r for r in server.requests if r.path.endswith("/chat/completions")]
    line = last_line(proc.stderr)
    assert proc.returncode == 2 and line.startswith("error: "), proc.stderr[-2000:]
    assert "HTTP 404" in line and "fix the endpoint's model or base_url" in line
    assert "re-run the same command to retry" not in proc.stderr
    assert chats and len({json.dumps(r.body, sort_keys=True) for r in chats}) == len(chats)
    assert not list((tmp_path / "run").glob("questions/*.json"))


def test_evaluate_without_predictions_stops_in_one_line(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = run_cli("dataset=smoke", f"out={out}", "progress=false", "phase=evaluate")
    line = last_line(proc.stderr)
    assert proc.returncode == 2 and line.startswith("error: ") and "phase=predict" in line
    assert "Traceback" not in proc.stderr and not list(out.glob("questions/*.json"))
