"""The reference service as an MCP server (official `mcp` SDK, `MCPServer`).

Tools mirror the REST contract (docs/live.md): `create_project`, `delete_project`,
`list_projects`, `capture`, `remember`, `search`. Served over stdio
(`python -m arms.server --mcp-stdio`) and over streamable HTTP at `/mcp` of the REST
app. Tools return JSON-able dicts, which the SDK sends as structured content. Deleting
an unknown project is a tool error saying `project '<id>' not found` (clients count
that as already deleted).
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from arms.server.service import MemoryService, Message, UnknownProject


def build_mcp(service: MemoryService) -> MCPServer:
    """An MCP server whose tools call `service`."""
    server = MCPServer("armbench-memory")

    @server.tool()
    def create_project(name: str) -> dict[str, Any]:
        """Create an isolated namespace; returns its id."""
        return {"id": service.create_project(name)}

    @server.tool()
    def delete_project(project_id: str) -> dict[str, Any]:
        """Delete a namespace and everything stored in it."""
        try:
            service.delete_project(project_id)
        except UnknownProject as exc:  # said to the client (the SDK hides other errors)
            raise ToolError(str(exc)) from None
        return {"deleted": project_id}

    @server.tool()
    def list_projects() -> dict[str, Any]:
        """Every namespace: id and name."""
        return {"projects": [{"id": i, "name": n} for i, n in service.list_projects()]}

    @server.tool()
    def capture(
        project_id: str,
        messages: list[dict[str, Any]],
        date_time: str | None = None,
        session: int = 1,
    ) -> dict[str, Any]:
        """Run an exchange (speaker/text/id/image_caption turns) through the extractor."""
        parsed = [
            Message(str(m["speaker"]), str(m["text"]), m.get("id"), m.get("image_caption"))
            for m in messages
        ]
        return service.capture(project_id, parsed, date_time, session)

    @server.tool()
    def remember(
        project_id: str, text: str, bench: str | None = None, date_time: str | None = None
    ) -> dict[str, Any]:
        """Store text verbatim as one memory; `bench` is the benchmark marker."""
        return {"id": service.remember(project_id, text, bench, date_time)}

    @server.tool()
    def search(project_id: str, query: str, k: int = 10) -> dict[str, Any]:
        """The top-k memories for a query, best first, with the rendered context."""
        return service.search(project_id, query, k).to_json()

    return server
