"""The accounting proxy and its clients: slow ones are cut off, gone ones cost no traceback.

Issue 40, item 12: the proxy kept a client that trickled its request forever, and printed
a traceback per client that went away (401 of them in one test). Real sockets on
127.0.0.1 against a real `AccountingProxy`.
"""

from __future__ import annotations

import json
import socket
import struct
from collections.abc import Iterator

import pytest

from bench.providers.proxy import AccountingProxy, ProxyBackend

HEAD = b"POST /arm/a/ingest/v1/chat/completions HTTP/1.0\r\nContent-Length: 50\r\n\r\n"


def _unused(*_: object) -> object:
    raise AssertionError("no request should reach the provider")


@pytest.fixture
def proxy() -> Iterator[AccountingProxy]:
    backend = ProxyBackend(chat=_unused, embedder=_unused, accounting=lambda: {"total": {}})
    server = AccountingProxy(backend, read_deadline_s=1.0)
    try:
        yield server
    finally:
        server.close()


def _connect(proxy: AccountingProxy) -> socket.socket:
    port = int(proxy.base_url.rsplit(":", 1)[1])
    return socket.create_connection(("127.0.0.1", port), timeout=20)


def test_a_client_that_never_finishes_its_request_is_cut_off(proxy: AccountingProxy) -> None:
    with _connect(proxy) as client:
        client.sendall(HEAD + b'{"mes')  # 5 of the 50 bytes announced, then nothing
        data = client.recv(4096)  # before: no answer, ever (this recv timed out)
    assert data == b"" or data.startswith(b"HTTP/1.0 400"), data


def test_clients_that_go_away_cost_no_traceback(
    proxy: AccountingProxy, capfd: pytest.CaptureFixture[str]
) -> None:
    for _ in range(20):
        client = _connect(proxy)
        client.sendall(HEAD + b'{"mes')
        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        client.close()  # a reset, mid-request
    with _connect(proxy) as client:  # still serving
        client.sendall(b"GET /accounting HTTP/1.0\r\n\r\n")
        reply = b""
        while chunk := client.recv(4096):
            reply += chunk
    assert reply.startswith(b"HTTP/1.0 200") and json.loads(reply.split(b"\r\n\r\n", 1)[1])
    assert "Traceback" not in capfd.readouterr().err
