"""Who is calling: an API key (``X-API-Key``, as the OpenIntent SDK sends it, or
``Authorization: Bearer``) resolves to exactly one tenant, and to the key's scopes, which
only the routes that say so require. No key is a 401; every route but discovery needs
one. A resolved key is remembered for ``CACHE_S`` so a request costs no extra round trip
under load, and requests that find it expired share one look-up; a revoked key stops
working within that time."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

from fastapi import Depends, Request

from api.errors import ApiError
from api.services import ApiServices, services
from memory.tenants.api_keys import KeyIdentity

CACHE_S = 2.0
_MAX_CACHED = 10_000
Authenticate = Callable[[str], Awaitable[KeyIdentity | None]]  # ApiKeyStore.authenticate
_Dependency = TypeVar("_Dependency", bound=Callable[..., Any])
_AUTHENTICATING: list[Callable[..., Any]] = []


def authenticating(dependency: _Dependency) -> _Dependency:
    """Marks a dependency that authenticates the request: ``tenant``, and one that calls
    it instead of depending on it. The OpenAPI document lists the API key for every route
    whose dependencies reach one (api/openapi.py)."""
    _AUTHENTICATING.append(dependency)
    return dependency


def authenticates(dependency: object) -> bool:
    return any(dependency is marked for marked in _AUTHENTICATING)


class _KeyCache:
    def __init__(self) -> None:
        self._identities: dict[str, tuple[KeyIdentity, float]] = {}
        self._lookups: dict[str, asyncio.Future[KeyIdentity | None]] = {}

    def identity(self, key: str) -> KeyIdentity | None:
        hit = self._identities.get(key)
        if hit is None or time.monotonic() - hit[1] > CACHE_S:
            return None
        return hit[0]

    def get(self, key: str) -> str | None:
        """The cached key's tenant (api/fast_reads.py: a read that needs no scope)."""
        found = self.identity(key)
        return found.tenant if found is not None else None

    def put(self, key: str, identity: KeyIdentity) -> None:
        if len(self._identities) >= _MAX_CACHED:
            self._identities.clear()
        self._identities[key] = (identity, time.monotonic())

    async def identity_of(self, key: str, authenticate: Authenticate) -> KeyIdentity | None:
        """The key's identity (tenant, key id, scopes) from the cache, else from
        ``authenticate``: one look-up per key at a time. Under load a key's expiry used
        to send every request in flight to the database at once (50 clients: about 40
        look-ups a second instead of one every CACHE_S); now they wait for the one
        look-up, which runs as its own task so a caller that goes away does not cancel it
        for the others. A revoked key still stops working within CACHE_S: nothing is
        served past its time."""
        found = self.identity(key)
        if found is not None:
            return found
        lookup = self._lookups.get(key)
        if lookup is None:
            lookup = asyncio.ensure_future(self._look_up(key, authenticate))
            self._lookups[key] = lookup
            lookup.add_done_callback(lambda done: self._looked_up(key, done))
        return await asyncio.shield(lookup)

    async def _look_up(self, key: str, authenticate: Authenticate) -> KeyIdentity | None:
        found = await authenticate(key)
        if found is not None:
            self.put(key, found)
        return found

    def _looked_up(self, key: str, done: asyncio.Future[KeyIdentity | None]) -> None:
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


@authenticating
async def tenant(request: Request) -> str:
    """The tenant of the request's API key (a dependency, or called by one: once per
    request either way). The key's id and scopes are left in ``request.state`` too."""
    # The key headers are read here, not declared as Header() parameters or security
    # dependencies (api/openapi.py writes the schemes into the OpenAPI document): each
    # declared parameter and sub-dependency costs FastAPI's resolver tens of
    # microseconds, on every authenticated request.
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
    found = await cache.identity_of(key, api.keys.authenticate)
    if found is None:
        raise ApiError(401, "unauthorized", "the API key is unknown or revoked")
    request.state.key_id = found.key_id
    request.state.scopes = found.scopes
    request.state.tenant = found.tenant
    return found.tenant


def _request_key(request: Request) -> str | None:
    headers = request.headers
    return _presented_key(headers.get("x-api-key"), headers.get("authorization"))


@dataclass(frozen=True, slots=True)
class Caller:
    """An authenticated caller: the key's tenant, public id and scopes."""

    tenant: str
    key_id: str
    scopes: frozenset[str]


async def caller(resolved: Annotated[str, Depends(tenant)], request: Request) -> Caller:
    # Authenticated already (the dependency above), which left the key's identity here.
    return Caller(resolved, request.state.key_id, request.state.scopes)


Tenant = Annotated[str, Depends(tenant)]
CallerIdentity = Annotated[Caller, Depends(caller)]
Api = Annotated[ApiServices, Depends(services)]
