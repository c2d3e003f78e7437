"""An unreachable endpoint stops the run in seconds with its URL named (issue 8, item 7)."""

from __future__ import annotations

import socket
import time
from pathlib import Path

from tests.e2e_support import last_line, run_cli
from tests.fault_server import FaultServer


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
