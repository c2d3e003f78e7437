"""A hanging MCP stdio server: `python tests/support/hostile_mcp.py PIDFILE [die]`.

Its tools follow the reference contract (docs/live.md), but `search` never answers (it
sleeps until cancelled) or, with `die`, ends the server process (a lost connection).
The process writes its pid to PIDFILE at start, so a test can check that the client
stopped it; it exits by itself after 120 s whatever happens.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer


def main() -> None:
    """Serve over stdio until the client closes the session (or 120 s pass)."""
    with open(sys.argv[1], "w") as handle:
        handle.write(str(os.getpid()))
    threading.Timer(120, lambda: os._exit(3)).start()
    server = MCPServer("hanging")
    projects: dict[str, list[Any]] = {}
    names: dict[str, str] = {}

    @server.tool()
    def create_project(name: str) -> dict[str, Any]:
        """A new namespace."""
        names[f"p{len(projects)}"] = name
        projects[f"p{len(projects)}"] = []
        return {"id": f"p{len(projects) - 1}"}

    @server.tool()
    def list_projects() -> dict[str, Any]:
        """Every namespace: id and name."""
        return {"projects": [{"id": p, "name": names[p]} for p in projects]}

    @server.tool()
    def delete_project(project_id: str) -> dict[str, Any]:
        """Delete a namespace."""
        projects.pop(project_id, None)
        return {"deleted": project_id}

    @server.tool()
    def capture(
        project_id: str,
        messages: list[dict[str, Any]],
        date_time: str | None = None,
        session: int = 1,
    ) -> dict[str, Any]:
        """Accept an exchange."""
        projects[project_id].extend(messages)
        return {"turn": 1, "facts": 0, "errors": 0}

    @server.tool()
    async def search(project_id: str, query: str, k: int = 10) -> dict[str, Any]:
        """Never answers (or, with `die`, kills the server)."""
        if sys.argv[2:] == ["die"]:
            os._exit(0)
        await anyio.sleep(3600)
        return {"results": [], "context": ""}

    server.run("stdio")


if __name__ == "__main__":
    main()
