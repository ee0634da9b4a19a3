"""docs/http-api.md's route tables against the app (issue 41: they had lost
`POST /api/v1/memory/search`): every route the app serves is listed, and every route
listed is served.

How the doc is read: a route table is a Markdown table whose header's first cell is
`route`. The first cell of each of its rows names the row's routes as backticked
`METHOD /path` items, one method each (a query string after `?` is left out), and holds
nothing else in backticks: a row whose routes cannot be read fails the test rather than
being skipped. A path parameter matches whatever its name (`{agentId}` is the code's
`{agent_id}`, `{runId}` its `{run_id:path}`). `METHOD /path` items in the first cell of
the doc's other tables (the majors table's `GET /.well-known/openwop`) must be served too.

What the app serves: every route `create_app` builds, the codec sub-application's under
`/codec`, and `/mcp` (a plain route taking any method: the doc lists it with the method
MCP clients use), less the OpenAPI document and its pages (`/openapi.json`, `/docs`,
`/redoc`: FastAPI's and fastapi-offline's own routes) with their static assets, which
the doc names in prose. HEAD beside GET is not listed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from fastapi import FastAPI
from fastapi.routing import iter_route_contexts
from starlette.routing import BaseRoute, Mount
from starlette.staticfiles import StaticFiles
from temporalio.client import Client

from api.app import create_app
from api.services import ApiServices
from memory.redaction.vault import StaticSecretVault
from memory.storage.engines import create_engine
from runtime.settings import Settings

DOC = Path(__file__).resolve().parents[2] / "docs" / "http-api.md"
ROUTE = re.compile(r"(GET|POST|PUT|PATCH|DELETE) (/[^\s?]*)(\?\S*)?")
ANY = "*"  # a route that takes every method (/mcp)

Route = tuple[str, str]  # (method, path with its parameters as {})


def _path(path: str) -> str:
    return re.sub(r"\{[^}]*\}", "{}", path)


def _cells(line: str) -> list[str]:
    # A cell may hold an escaped pipe (`"predicate" \| "time"`).
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip().strip("|"))]


def _tables(text: str) -> list[list[list[str]]]:
    """Each table's rows as cells, header first, without the separator row."""
    tables: list[list[list[str]]] = []
    current: list[list[str]] = []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            cells = _cells(line)
            if not all(re.fullmatch(r":?-+:?", cell) for cell in cells):
                current.append(cells)
        elif current:
            tables.append(current)
            current = []
    return tables


def documented(text: str) -> tuple[set[Route], list[str]]:
    """The routes the tables list, and the route-table cells that could not be read."""
    routes: set[Route] = set()
    unreadable: list[str] = []
    for header, *rows in _tables(text):
        route_table = header[0] == "route"
        for row in rows:
            items = re.findall(r"`([^`]+)`", row[0])
            found = [ROUTE.fullmatch(item) for item in items]
            if route_table and (not items or None in found):
                unreadable.append(row[0])
            routes.update((match[1], _path(match[2])) for match in found if match)
    return routes, unreadable


def _app() -> FastAPI:
    """The app as `memoryctl serve` builds it; its services are never called (listing
    routes connects to nothing)."""

    async def temporal() -> Client:
        raise AssertionError("routes are only listed here")

    engine = create_engine("postgresql+asyncpg://unused@127.0.0.1:9/unused")
    return create_app(ApiServices.build(Settings(), engine, StaticSecretVault({}), temporal))


# The OpenAPI document and its pages: FastAPI's and fastapi-offline's own routes.
DOCS_PAGES = {"/openapi.json", "/docs", "/docs/oauth2-redirect", "/redoc"}


def served(app: FastAPI) -> tuple[set[Route], set[str]]:
    """The app's routes, and the paths of the documentation pages left out."""
    found: set[Route] = set()
    pages: set[str] = set()

    def add(routes: Sequence[BaseRoute], prefix: str) -> None:
        for route in iter_route_contexts(routes):
            original, path = route.original_route, prefix + str(route.path)
            if isinstance(original, Mount):
                if isinstance(original.app, StaticFiles):
                    continue  # Swagger UI's and ReDoc's scripts (fastapi-offline)
                if original.routes:
                    add(original.routes, path)
                else:
                    found.add((ANY, _path(path)))
                continue
            module = getattr(getattr(original, "endpoint", None), "__module__", None) or ""
            if module.split(".")[0] in {"fastapi", "fastapi_offline"}:
                pages.add(path)
                continue
            methods = route.methods
            if methods is None:
                found.add((ANY, _path(path)))
                continue
            listed = set(methods) - ({"HEAD"} if "GET" in methods else set())
            found.update((method, _path(path)) for method in listed)

    add(app.routes, "")
    return found, pages


def test_the_route_tables_list_every_route_the_app_serves_and_no_other() -> None:
    listed, unreadable = documented(DOC.read_text(encoding="utf-8"))
    routes, pages = served(_app())
    assert pages == DOCS_PAGES, pages
    assert len(routes) > 70 and len(listed) > 10, (len(routes), len(listed))
    missing = sorted(
        (method, path)
        for method, path in routes
        if (method, path) not in listed and not (method == ANY and path in {p for _, p in listed})
    )
    unserved = sorted(
        (method, path)
        for method, path in listed
        if (method, path) not in routes and (ANY, path) not in routes
    )
    problems = {
        "served, but not in docs/http-api.md's route tables": missing,
        "in docs/http-api.md's tables, but not served": unserved,
        "route-table rows without readable `METHOD /path` items": unreadable,
    }
    report = [f"{what}: {found}" for what, found in problems.items() if found]
    assert not report, "\n".join(report)


def test_how_the_tables_are_read() -> None:
    text = "\n".join(
        [
            "| route | what it does |",
            "|---|---|",
            "| `GET /v1/agents/{agentId}`, `GET /agents/{agentId}` | one agent |",
            '| `POST /v1/fire?memoryRef=` | `{condition?: "a" \\| "b"}` |',
            "| `GET`, `PUT /v1/settings` | both |",
            "| `GET /x` and the routes above under it | prose |",
            "",
            "| request | answer |",
            "|---|---|",
            "| `GET /.well-known/openwop` without the header | v1 |",
            "| a `/v1/` path with a 2.x header | 400 |",
        ]
    )
    routes, unreadable = documented(text)
    assert routes == {
        ("GET", "/v1/agents/{}"),
        ("GET", "/agents/{}"),
        ("POST", "/v1/fire"),
        ("PUT", "/v1/settings"),
        ("GET", "/x"),
        ("GET", "/.well-known/openwop"),
    }
    assert unreadable == ["`GET`, `PUT /v1/settings`"]
