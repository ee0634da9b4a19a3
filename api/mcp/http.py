"""The MCP server on the API, as streamable HTTP at ``/mcp`` (stateless, JSON answers):
every request carries the caller's API key (``Authorization: Bearer`` or ``X-API-Key``),
which decides the tenant as on every route; ``X-Agent-ID`` names the agent a tool
addresses when the tool's ``agent_id`` does not. A request without a known key is a 401
before any tool runs.

Host-header (DNS rebinding) protection is off: it guards servers that answer without
credentials, and every request here needs a key a browser page cannot add across origins
without the server's consent (no CORS is served).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from api.auth import _KeyCache, _presented_key
from api.mcp.memory_tools import McpCaller, MemoryTools
from api.mcp.server import UnknownCaller, build_server
from api.services import ApiServices

MCP_PATH = "/mcp"


def _key(headers: Mapping[str, str] | None) -> str | None:
    if headers is None:
        return None
    return _presented_key(headers.get("x-api-key"), headers.get("authorization"))


class _RequireKey:
    """The /mcp endpoint behind the API's key check (401 in the API's error envelope)."""

    def __init__(self, inner: ASGIApp, api: ApiServices, cache: _KeyCache) -> None:
        self.inner, self.api, self.cache = inner, api, cache

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        key = _key(Headers(scope=scope))
        known = await self.cache.identity_of(key, self.api.keys.authenticate) if key else None
        if known is None:
            message = "an API key is required (X-API-Key or Authorization: Bearer)"
            if key:
                message = "the API key is unknown or revoked"
            await JSONResponse({"error": "unauthorized", "message": message}, 401)(
                scope, receive, send
            )
            return
        await self.inner(scope, receive, send)


def mcp_on_api(api: ApiServices, cache: _KeyCache) -> tuple[Route, MCPServer]:
    """The /mcp route, and the server whose session manager the app's lifespan runs."""

    async def identify(ctx: Context) -> McpCaller:
        headers = ctx.headers  # case-insensitive (starlette's Headers); None: no HTTP
        key = _key(headers)
        known = await cache.identity_of(key, api.keys.authenticate) if key else None
        if known is None:
            raise UnknownCaller("an API key is required")
        return McpCaller(known.tenant, headers.get("x-agent-id") if headers else None)

    server = build_server(MemoryTools(api.store, api.registries.for_tenant), identify)
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        stateless_http=True,
        json_response=True,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    (route,) = [r for r in app.routes if isinstance(r, Route)]
    return Route(MCP_PATH, endpoint=_RequireKey(route.endpoint, api, cache)), server


@asynccontextmanager
async def running(server: MCPServer) -> AsyncIterator[None]:
    """For the app's lifespan: the transport's task group, open while the app serves."""
    async with server.session_manager.run():
        yield
