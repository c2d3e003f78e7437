"""The reference memory server: REST contract, isolation, persistence, MCP tools."""

from __future__ import annotations

from pathlib import Path

import anyio
import httpx
import pytest
from mcp import Client

from tests.support.live_server import project_ids, reference_server

http = httpx.Client(timeout=120)  # generous: the shared test machine can be busy

EXCHANGE = {
    "messages": [
        {"speaker": "Alice", "text": "I moved to Berlin last month.", "id": "D1:1"},
        {"speaker": "Bob", "text": "Nice! I still live in Porto.", "id": "D1:2"},
    ],
    "date_time": "8 May 2023",
    "session": 1,
}


@pytest.mark.slow
def test_rest_contract_isolation_and_persistence(tmp_path: Path) -> None:
    with reference_server(tmp_path / "data") as url:
        a = http.post(f"{url}/v1/projects", json={"name": "a"}).json()["id"]
        b = http.post(f"{url}/v1/projects", json={"name": "b"}).json()["id"]
        assert sorted(project_ids(url)) == sorted([a, b])
        captured = http.post(f"{url}/v1/projects/{a}/capture", json=EXCHANGE).json()
        assert captured["turn"] == 1 and captured["facts"] >= 1
        memory = {"text": "Carol collects stamps", "metadata": {"bench": "X:1"}}
        assert http.post(f"{url}/v1/projects/{b}/memories", json=memory).status_code == 201
        query = {"query": "Where does Alice live?", "k": 5}
        found = http.post(f"{url}/v1/projects/{a}/search", json=query).json()
        ids_a = {s for r in found["results"] for s in r["metadata"]["bench"]}
        assert ids_a and ids_a <= {"D1:1", "D1:2"}  # markers come back; b's memory does not
        assert "Berlin" in found["context"]
        other = http.post(f"{url}/v1/projects/{b}/search", json=query).json()["results"]
        assert [r["source_ids"] for r in other] == [["X:1"]]
        assert "/v1/projects/{project_id}/search" in http.get(f"{url}/openapi.json").json()["paths"]
        assert http.delete(f"{url}/v1/projects/{b}").status_code == 200
        assert http.post(f"{url}/v1/projects/{b}/search", json=query).status_code == 404
        calls = http.get(f"{url}/v1/stats").json()["calls"]
        assert calls["search"] == 3 and calls["capture"] == 1
    with reference_server(tmp_path / "data") as url:  # restarted on the same --data
        assert project_ids(url) == [a]
        again = http.post(f"{url}/v1/projects/{a}/search", json=query).json()
        assert again["results"] == found["results"]


def test_bearer_token_is_required_when_configured(tmp_path: Path) -> None:
    env = {"ARMBENCH_TEST_TOKEN": "s3cret"}
    with reference_server(tmp_path, env, "--token-env", "ARMBENCH_TEST_TOKEN") as url:
        assert http.get(f"{url}/v1/projects").status_code == 401
        assert project_ids(url, token="s3cret") == []
        assert http.get(f"{url}/health").status_code == 200


def test_mcp_tools_over_streamable_http(tmp_path: Path) -> None:
    async def session(url: str) -> tuple[set[str], list[str]]:
        async with Client(f"{url}/mcp") as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            made = await client.call_tool("create_project", {"name": "m"})
            pid = made.structured_content["id"]
            await client.call_tool("capture", {"project_id": pid, **EXCHANGE})
            found = await client.call_tool(
                "search", {"project_id": pid, "query": "Where does Alice live?", "k": 5}
            )
            await client.call_tool("delete_project", {"project_id": pid})
            return tools, [s for r in found.structured_content["results"] for s in r["source_ids"]]

    with reference_server(tmp_path) as url:
        tools, sources = anyio.run(session, url)
        assert {"create_project", "delete_project", "capture", "remember", "search"} <= tools
        assert "D1:1" in sources
        assert project_ids(url) == []


@pytest.mark.slow
def test_sigterm_removes_only_the_servers_own_scratch_folder(tmp_path: Path) -> None:
    """Without `--data` the stores live in a temporary folder that a SIGTERM still removes
    (uvicorn re-raises the signal after shutting down); with `--data` none is made."""
    scratch, data = tmp_path / "tmp", tmp_path / "data"
    scratch.mkdir()
    with reference_server(None, {"TMPDIR": str(scratch)}) as url:
        assert http.get(f"{url}/health").status_code == 200
        assert [p.name[:15] for p in scratch.iterdir()] == ["armbench-server"]
    assert list(scratch.iterdir()) == []
    with reference_server(data, {"TMPDIR": str(scratch)}) as url:
        assert http.post(f"{url}/v1/projects", json={"name": "a"}).status_code in (200, 201)
    assert list(scratch.iterdir()) == [] and any(data.iterdir())
