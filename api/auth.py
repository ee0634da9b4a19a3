"""Who is calling: an API key (``X-API-Key``, as the OpenIntent SDK sends it, or
``Authorization: Bearer``) resolves to exactly one tenant. No key is a 401; every route
but discovery needs one. A resolved key is remembered for ``CACHE_S`` so a request
costs no extra round trip under load, and requests that find it expired share one
look-up; a revoked key stops working within that time."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request

from api.errors import ApiError
from api.services import ApiServices, services
from memory.api_keys import key_id_of

CACHE_S = 2.0
_MAX_CACHED = 10_000


class _KeyCache:
    def __init__(self) -> None:
        self._tenants: dict[str, tuple[str, float]] = {}
        self._lookups: dict[str, asyncio.Future[str | None]] = {}

    def get(self, key: str) -> str | None:
        hit = self._tenants.get(key)
        if hit is None or time.monotonic() - hit[1] > CACHE_S:
            return None
        return hit[0]

    def put(self, key: str, tenant: str) -> None:
        if len(self._tenants) >= _MAX_CACHED:
            self._tenants.clear()
        self._tenants[key] = (tenant, time.monotonic())

    async def tenant_of(
        self, key: str, authenticate: Callable[[str], Awaitable[str | None]]
    ) -> str | None:
        """The key's tenant from the cache, else from ``authenticate``: one look-up per
        key at a time. Under load a key's expiry used to send every request in flight to
        the database at once (50 clients: about 40 look-ups a second instead of one
        every CACHE_S); now they wait for the one look-up, which runs as its own task so
        a caller that goes away does not cancel it for the others. A revoked key still
        stops working within CACHE_S: nothing is served past its time."""
        found = self.get(key)
        if found is not None:
            return found
        lookup = self._lookups.get(key)
        if lookup is None:
            lookup = asyncio.ensure_future(self._look_up(key, authenticate))
            self._lookups[key] = lookup
            lookup.add_done_callback(lambda done: self._looked_up(key, done))
        return await asyncio.shield(lookup)

    async def _look_up(
        self, key: str, authenticate: Callable[[str], Awaitable[str | None]]
    ) -> str | None:
        found = await authenticate(key)
        if found is not None:
            self.put(key, found)
        return found

    def _looked_up(self, key: str, done: asyncio.Future[str | None]) -> None:
        if self._lookups.get(key) is done:
            del self._lookups[key]
        if not done.cancelled():
            done.exception()  # its waiters raise it; none left must not log it as lost


def _presented_key(x_api_key: str | None, authorization: str | None) -> str | None:
    if x_api_key:
        return x_api_key.strip()
    if authorization and authorization.lower().startswith("bearer "):
        return authorization[7:].strip()
    return None


async def tenant(request: Request) -> str:
    """The tenant of the request's API key (a dependency, or called by one: once per
    request either way)."""
    # The key headers are read here, not declared as Header() parameters (they are left
    # out of the OpenAPI document anyway): each declared parameter and sub-dependency
    # costs FastAPI's resolver tens of microseconds, on every authenticated request.
    known: str | None = getattr(request.state, "tenant", None)
    if known is not None:
        return known
    key = _request_key(request)
    if not key:
        raise ApiError(
            401, "unauthorized", "an API key is required (X-API-Key or Authorization: Bearer)"
        )
    cache: _KeyCache = request.app.state.key_cache
    api: ApiServices = request.app.state.services
    found = await cache.tenant_of(key, api.keys.authenticate)
    if found is None:
        raise ApiError(401, "unauthorized", "the API key is unknown or revoked")
    request.state.tenant = found
    return found


def _request_key(request: Request) -> str | None:
    headers = request.headers
    return _presented_key(headers.get("x-api-key"), headers.get("authorization"))


@dataclass(frozen=True, slots=True)
class Caller:
    """An authenticated caller: the key's tenant and the key's public id."""

    tenant: str
    key_id: str


async def caller(resolved: Annotated[str, Depends(tenant)], request: Request) -> Caller:
    # Authenticated already (the dependency above), so the key is well formed.
    key = _request_key(request) or ""
    return Caller(resolved, key_id_of(key) or "unknown")


Tenant = Annotated[str, Depends(tenant)]
CallerIdentity = Annotated[Caller, Depends(caller)]
Api = Annotated[ApiServices, Depends(services)]
