"""Who is calling: an API key (``X-API-Key``, as the OpenIntent SDK sends it, or
``Authorization: Bearer``) resolves to exactly one tenant. No key is a 401; every route
but discovery needs one. A resolved key is remembered for ``CACHE_S`` so a request
costs no extra round trip under load; a revoked key stops working within that time."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Header, Request

from api.errors import ApiError
from api.services import ApiServices, services
from memory.api_keys import key_id_of

CACHE_S = 2.0
_MAX_CACHED = 10_000


class _KeyCache:
    def __init__(self) -> None:
        self._tenants: dict[str, tuple[str, float]] = {}

    def get(self, key: str) -> str | None:
        hit = self._tenants.get(key)
        if hit is None or time.monotonic() - hit[1] > CACHE_S:
            return None
        return hit[0]

    def put(self, key: str, tenant: str) -> None:
        if len(self._tenants) >= _MAX_CACHED:
            self._tenants.clear()
        self._tenants[key] = (tenant, time.monotonic())


def _presented_key(x_api_key: str | None, authorization: str | None) -> str | None:
    if x_api_key:
        return x_api_key.strip()
    if authorization and authorization.lower().startswith("bearer "):
        return authorization[7:].strip()
    return None


async def tenant(
    request: Request,
    api: Annotated[ApiServices, Depends(services)],
    x_api_key: Annotated[str | None, Header(include_in_schema=False)] = None,
    authorization: Annotated[str | None, Header(include_in_schema=False)] = None,
) -> str:
    key = _presented_key(x_api_key, authorization)
    if not key:
        raise ApiError(
            401, "unauthorized", "an API key is required (X-API-Key or Authorization: Bearer)"
        )
    cache: _KeyCache = request.app.state.key_cache
    found = cache.get(key)
    if found is None:
        found = await api.keys.authenticate(key)
        if found is None:
            raise ApiError(401, "unauthorized", "the API key is unknown or revoked")
        cache.put(key, found)
    return found


@dataclass(frozen=True, slots=True)
class Caller:
    """An authenticated caller: the key's tenant and the key's public id."""

    tenant: str
    key_id: str


async def caller(
    resolved: Annotated[str, Depends(tenant)],
    x_api_key: Annotated[str | None, Header(include_in_schema=False)] = None,
    authorization: Annotated[str | None, Header(include_in_schema=False)] = None,
) -> Caller:
    # Authenticated already (the dependency above), so the key is well formed.
    key = _presented_key(x_api_key, authorization) or ""
    return Caller(resolved, key_id_of(key) or "unknown")


Tenant = Annotated[str, Depends(tenant)]
CallerIdentity = Annotated[Caller, Depends(caller)]
Api = Annotated[ApiServices, Depends(services)]
