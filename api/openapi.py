"""The API key in the OpenAPI document, so Swagger UI at ``/docs`` has its Authorize
button and "Try it out" sends the key (issue 41).

The two ways a key is sent (api/auth.py) are FastAPI's own security schemes,
``APIKeyHeader`` for ``X-API-Key`` and ``HTTPBearer`` for ``Authorization: Bearer``,
declared under ``components.securitySchemes`` exactly as FastAPI writes them. Every
operation whose route authenticates (its dependencies reach one marked
``@authenticating``: ``tenant``, or a dependency that calls it) lists both, as
alternatives; a public one lists none.

They are written into the generated document rather than resolved as dependencies:
the key check reads its headers from the request because every sub-dependency costs
FastAPI's resolver tens of microseconds on every request (api/auth.py,
docs/performance.md), and declaring a scheme that way would add two to every route.
Authentication is unchanged: the same code answers the same 401.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.dependencies.models import Dependant
from fastapi.encoders import jsonable_encoder
from fastapi.routing import APIRoute, iter_route_contexts
from fastapi.security import APIKeyHeader, HTTPBearer
from fastapi.security.base import SecurityBase

from api.auth import authenticates

API_KEY_HEADER = APIKeyHeader(
    name="X-API-Key",
    auto_error=False,
    description="An API key (`memoryctl keys create`); it decides the tenant.",
)
BEARER = HTTPBearer(
    auto_error=False,
    description="The same API key, as `Authorization: Bearer <key>`.",
)
SCHEMES: tuple[SecurityBase, ...] = (API_KEY_HEADER, BEARER)


def requirement() -> list[dict[str, list[str]]]:
    """An operation's ``security``: alternatives, either scheme is enough."""
    return [{scheme.scheme_name: []} for scheme in SCHEMES]


def _authenticated(dependant: Dependant) -> bool:
    return any(authenticates(sub.call) or _authenticated(sub) for sub in dependant.dependencies)


def key_operations(app: FastAPI) -> set[tuple[str, str]]:
    """``(path, method)`` of every documented operation that needs a key, as the
    document names them (``/v1/runs/{run_id}``, ``get``)."""
    found: set[tuple[str, str]] = set()
    for route in iter_route_contexts(app.routes):
        if not isinstance(route.original_route, APIRoute) or not route.include_in_schema:
            continue
        path, methods = route.path_format, route.methods
        if path is not None and methods and _authenticated(route.dependant):
            found.update((path, method.lower()) for method in methods)
    return found


def declare_api_key(app: FastAPI) -> None:
    """Adds the schemes and each operation's requirement to ``app``'s OpenAPI document,
    once, when it is first generated."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            document = generate()
            schemes = document.setdefault("components", {}).setdefault("securitySchemes", {})
            for scheme in SCHEMES:
                schemes[scheme.scheme_name] = jsonable_encoder(
                    scheme.model, by_alias=True, exclude_none=True
                )
            paths = document.get("paths", {})
            for path, method in key_operations(app):
                operation = paths.get(path, {}).get(method)
                if operation is not None:
                    operation["security"] = requirement()
            app.openapi_schema = document
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
