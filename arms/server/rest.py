"""The reference service's REST API (FastAPI); the contract is documented in docs/live.md.

    GET    /health                          {"status": "ok", "projects": n, "engine": ...}
    GET    /v1/projects                     {"projects": [{"id", "name"}]}
    POST   /v1/projects          {"name"}   {"id"}
    DELETE /v1/projects/{id}                {"deleted": id}
    POST   /v1/projects/{id}/capture        {"messages": [{speaker, text, id, image_caption}],
                                             "date_time", "session"} -> {"turn", "facts", "errors"}
    POST   /v1/projects/{id}/memories       {"text", "metadata": {"bench"}, "date_time"} -> {"id"}
    POST   /v1/projects/{id}/search         {"query", "k"} -> {"results": [...], "context"}
    POST   /v1/projects/{id}/answer         {"query", "k"} -> {"answer", "model", "results",
                                             "context"} (offline extractive reader, no LLM)
    GET    /v1/stats                        {"calls": {endpoint: n}}

Optional bearer auth: with a token configured, every /v1 route needs
`Authorization: Bearer <token>` (401 otherwise). The MCP server is mounted at `/mcp`
(streamable HTTP). OpenAPI docs at `/docs`, schema at `/openapi.json`.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import AsyncIterator
from typing import Any

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from arms.server.mcp_tools import build_mcp
from arms.server.service import MemoryService, Message, UnknownProject


class ProjectIn(BaseModel):
    """A namespace to create."""

    name: str = "default"


class MessageIn(BaseModel):
    """One turn of an exchange; `id` is the client's unit id (benchmark marker)."""

    speaker: str
    text: str
    id: str | None = None
    image_caption: str | None = None


class CaptureIn(BaseModel):
    """One exchange for the engine's capture (extraction) path."""

    messages: list[MessageIn] = Field(min_length=1)
    date_time: str | None = None
    session: int = 1


class MemoryIn(BaseModel):
    """A raw memory; `metadata.bench` (or `[bench:<id>]` in text) is the marker."""

    text: str
    metadata: dict[str, Any] = Field(default_factory=dict)
    date_time: str | None = None


class SearchIn(BaseModel):
    """A query and how many results to return."""

    query: str
    k: int = Field(default=10, ge=1, le=1000)


def build_app(service: MemoryService, token: str | None = None) -> FastAPI:
    """The FastAPI app over `service`, with the MCP server mounted at `/mcp`."""
    mcp = build_mcp(service)
    mcp_app = mcp.streamable_http_app(streamable_http_path="/mcp")

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        async with mcp.session_manager.run():
            yield
        service.close()

    app = FastAPI(title="armbench reference memory service", version="1", lifespan=lifespan)

    def authorised(request: Request) -> None:
        if token is None:
            return
        sent = request.headers.get("authorization", "")
        if not secrets.compare_digest(sent.encode(), f"Bearer {token}".encode()):
            raise HTTPException(401, "missing or wrong bearer token")

    @app.exception_handler(UnknownProject)
    async def unknown(_: Request, exc: UnknownProject) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=404)

    @app.get("/health")
    def health() -> dict[str, Any]:
        return {"status": "ok", "engine": "neuromorphic", "embedder": service.embedder.model}

    auth = [Depends(authorised)]
    _project_routes(app, service, auth)
    _memory_routes(app, service, auth)
    app.mount("/", mcp_app)
    return app


def _project_routes(app: FastAPI, service: MemoryService, auth: list[Any]) -> None:
    """List, create and delete namespaces; call counts."""

    @app.get("/v1/projects", dependencies=auth)
    def list_projects() -> dict[str, Any]:
        return {"projects": [{"id": i, "name": n} for i, n in service.list_projects()]}

    @app.post("/v1/projects", dependencies=auth, status_code=201)
    def create_project(body: ProjectIn) -> dict[str, str]:
        return {"id": service.create_project(body.name)}

    @app.delete("/v1/projects/{project_id}", dependencies=auth)
    def delete_project(project_id: str) -> dict[str, str]:
        service.delete_project(project_id)
        return {"deleted": project_id}

    @app.get("/v1/stats", dependencies=auth)
    def stats() -> dict[str, Any]:
        return {"calls": dict(sorted(service.calls.items()))}


def _memory_routes(app: FastAPI, service: MemoryService, auth: list[Any]) -> None:
    """Capture, remember and search inside one namespace."""

    @app.post("/v1/projects/{project_id}/capture", dependencies=auth)
    def capture(project_id: str, body: CaptureIn) -> dict[str, int]:
        messages = [Message(m.speaker, m.text, m.id, m.image_caption) for m in body.messages]
        return service.capture(project_id, messages, body.date_time, body.session)

    @app.post("/v1/projects/{project_id}/memories", dependencies=auth, status_code=201)
    def remember(project_id: str, body: MemoryIn) -> dict[str, str]:
        marker = body.metadata.get("bench")
        memory_id = service.remember(
            project_id, body.text, str(marker) if marker else None, body.date_time
        )
        return {"id": memory_id}

    @app.post("/v1/projects/{project_id}/search", dependencies=auth)
    def search(project_id: str, body: SearchIn) -> dict[str, Any]:
        return service.search(project_id, body.query, body.k).to_json()

    @app.post("/v1/projects/{project_id}/answer", dependencies=auth)
    def answer(project_id: str, body: SearchIn) -> dict[str, Any]:
        text, model, found = service.answer(project_id, body.query, body.k)
        return {"answer": text, "model": model, **found.to_json()}
