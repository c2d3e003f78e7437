"""Start the reference memory server (`python -m arms.server`) on a free loopback port."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    """A TCP port nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def reference_server(
    data: Path | None, env: dict[str, str] | None = None, *extra: str
) -> Iterator[str]:
    """Run the server with `--data data` (none: its own temporary folder); yield its base
    URL; stop it afterwards with SIGTERM, as a service manager does."""
    port = free_port()
    folder = ["--data", str(data)] if data is not None else []
    proc = subprocess.Popen(
        [sys.executable, "-m", "arms.server", "--port", str(port), *folder, *extra],
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    f"server did not start: {proc.stderr.read() if proc.stderr else ''}"
                )
            time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def project_ids(url: str, token: str | None = None) -> list[str]:
    """Ids of every project the server holds."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    reply = httpx.get(f"{url}/v1/projects", headers=headers, timeout=120)
    reply.raise_for_status()
    return [p["id"] for p in reply.json()["projects"]]
