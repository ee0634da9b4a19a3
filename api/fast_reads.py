"""``GET /api/v1/memory/{entry_id}`` answered before FastAPI's routing: the read every
agent makes at session start, many times over.

Measured on this 2-core machine (2026-11-27, API CPU per request under 50 clients): the
store's get costs about 0.13 ms; FastAPI added about 0.15 ms to any route (routing
through every router before this one, request and response objects) and 0.1 ms more to
this one (dependency resolution, response validation), so HTTP cost 3x the call it
wraps. This step sits in front of the router, inside all of the app's middleware and
exception handling (api/app.py), and answers with the functions the route uses, in the
same order: the key's tenant from the shared key cache, the addressed agent,
``store.get_entry`` with its LRU touch, ``entry_out``, the route's JSON serialisation
and response headers. The tests hold the two to the same bytes.

It answers only the plain case; any other request goes on to the FastAPI route, which
answers it exactly as it always did: no key or a key not in the cache (the route
authenticates it and fills the cache, so revocation works as before, api/auth.py), no
or a malformed agent, a root path, and every request while FastAPI's OpenTelemetry
instrumentation is on (its spans keep their route). An entry not found is the route's
404, a database error its 503: raised here as there, to the same exception handlers.
"""

from __future__ import annotations

from pydantic import TypeAdapter
from starlette.datastructures import Headers, QueryParams
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from api.auth import _KeyCache, _presented_key
from api.errors import ApiError, not_found
from api.openintent_models import MemoryEntryOut, entry_out
from api.openintent_routes import addressed_agent
from api.request_metrics import ROUTE_TEMPLATE
from api.services import ApiServices
from schemas.errors import MemoryError_

ENTRY_PATH = "/api/v1/memory/"
# The template of the route this answers for (api/openintent_routes.py).
ENTRY_ROUTE = ENTRY_PATH + "{entry_id}"
# GET routes under ENTRY_PATH that are not an entry (api/openintent_routes.py).
_NOT_ENTRIES = frozenset({"events"})
# What the route's response_model serialises with (FastAPI's default: by alias).
_ENTRY_JSON: TypeAdapter[MemoryEntryOut] = TypeAdapter(MemoryEntryOut)


class FastEntryReads:
    """Pure ASGI, wrapping the app's router (api/app.py)."""

    def __init__(self, router: ASGIApp, services: ApiServices, key_cache: _KeyCache) -> None:
        self.router = router
        self.services = services
        self.key_cache = key_cache

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "GET" and not scope.get("root_path"):
            path: str = scope["path"]
            entry_id = path[len(ENTRY_PATH) :] if path.startswith(ENTRY_PATH) else ""
            if entry_id and "/" not in entry_id and entry_id not in _NOT_ENTRIES:
                response = await self._answer(scope, entry_id)
                if response is not None:
                    scope[ROUTE_TEMPLATE] = ENTRY_ROUTE
                    await response(scope, receive, send)
                    return
        await self.router(scope, receive, send)

    async def _answer(self, scope: Scope, entry_id: str) -> Response | None:
        """The route's response, or None to let the route answer."""
        if scope.get("fastapi.telemetry") is not None:
            return None
        headers = Headers(scope=scope)
        key = _presented_key(headers.get("x-api-key"), headers.get("authorization"))
        tenant = self.key_cache.get(key) if key else None
        if tenant is None:
            return None
        try:
            agent_id = QueryParams(scope["query_string"]).get("agent_id")
            ref, agent = addressed_agent(tenant, agent_id, headers.get("x-agent-id"))
        except (ApiError, MemoryError_):
            return None  # the route answers the same input with the same error
        entry = await self.services.store.get_entry(ref, entry_id)
        if entry is None:
            raise not_found("memory entry")
        body = _ENTRY_JSON.dump_json(entry_out(entry, agent), by_alias=True)
        return Response(content=body, media_type="application/json")
