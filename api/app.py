"""The FastAPI application: one factory, so ``memoryctl serve``, the quick start, the
tests and the benchmark all run the same app."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi_offline import FastAPIOffline
from temporalio.common import MetricMeter

from api import openwop_routes
from api.auth import _KeyCache
from api.body_limit import MAX_BODY_BYTES, BodyLimit
from api.codec_server import codec_app
from api.errors import install_error_handlers
from api.openapi import declare_api_key
from api.request_metrics import RequestMetrics
from api.services import ApiServices
from api.wire_version import WireVersion
from runtime.health import health_routes, probed
from runtime.tracing import instrument_app

DESCRIPTION = """Agent memory over Temporal and PostgreSQL.

* openwop, on two majors through the same handlers: v1 under `/v1/` (`/v1/agents`,
  `/v1/runs`, the sample seams under `/v1/host/sample/`) and v2 unprefixed (`/agents`,
  `/runs`, the seams under `/conformance/seams/sample/`), negotiated with the
  `OpenWOP-Version` header; `GET /.well-known/openwop` (public) answers in the major
  the header asks for (v1 without one).
* OpenIntent RFC-0015 memory REST under `/api/v1/`, and search by meaning
  (`POST /api/v1/memory/search`, an extension).
* MCP (Model Context Protocol) for agents: streamable HTTP at `/mcp` (stateless, JSON),
  tools remember, recall, forget, session_start, commitments, proposals.
* Commitments (host extension): `/v1/host/commitments` (list, show, confirm, cancel)
  and `/v1/host/commitment-settings`.
* Proposals (RFC 0096, reviewable learning): `/v1/proposals` (list, read, revise, apply,
  approval, reject, archive); the conformance seam `/v1/host/sample/proposals`.

* The Temporal codec server (encrypted payloads) under `/codec/`: `POST /codec/decode`,
  `POST /codec/encode`.
* Operations (no key): `GET /healthz` (alive), `GET /readyz` (database and Temporal
  reachable: 200 or 503 with each check, and whether a worker polls), `GET /metrics`
  (Prometheus text).

Every route but discovery and operations needs an API key (`X-API-Key` or
`Authorization: Bearer`; Swagger UI's **Authorize** button takes it for "Try it out");
a key belongs to one tenant and reaches only that tenant's memoryRefs. Errors are
`{"error": code, "message": ..., "field"?: ...}` and never quote stored content.
"""


def create_app(api: ApiServices, *, max_body_bytes: int = MAX_BODY_BYTES) -> FastAPI:
    from api import (
        commitment_routes,
        compaction_seam,
        openintent_routes,
        proposal_routes,
        run_routes,
        seams,
        search_routes,
    )
    from api.fast_reads import FastEntryReads
    from api.mcp.http import mcp_on_api, running

    key_cache = _KeyCache()
    mcp_route, mcp_server = mcp_on_api(api, key_cache)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with running(mcp_server):
            yield

    # FastAPI's own /docs page loads Swagger UI from a CDN: blank offline. This one
    # serves the same page with its assets from the fastapi-offline wheel.
    app = FastAPIOffline(
        title="agent-memory-temporal",
        version="0.1.0",
        description=DESCRIPTION,
        docs_url="/docs",
        redoc_url="/redoc",
        openapi_url="/openapi.json",
        # A path with a trailing slash is a 404 in the error envelope, not a redirect with
        # an empty body that a client must follow to learn the same thing.
        redirect_slashes=False,
        lifespan=lifespan,
    )
    app.state.services = api
    app.state.key_cache = key_cache
    install_error_handlers(app)
    # The memory REST first: routes are matched in order, router by router, and these
    # are what agents call at every session start. No other router serves /api/v1.
    app.include_router(openintent_routes.router)
    app.include_router(search_routes.router)
    app.include_router(openwop_routes.router)
    # One set of handlers per surface, on both openwop majors (api/wire_version.py):
    # v1 under /v1, v2 unprefixed, and the seams where each major's suite looks.
    for prefix in ("/v1", ""):
        app.include_router(openwop_routes.agents_router, prefix=prefix)
        app.include_router(run_routes.router, prefix=prefix)
    app.include_router(seams.router, prefix="/v1/host/sample")
    app.include_router(seams.router, prefix="/conformance/seams/sample")
    app.include_router(compaction_seam.router)
    app.include_router(commitment_routes.router)
    app.include_router(proposal_routes.production_router, prefix="/v1/proposals")
    app.include_router(proposal_routes.v2_router, prefix="/proposals")
    for seam_prefix in ("/v1/host/sample", "/conformance/seams/sample"):
        app.include_router(
            proposal_routes.seam_router,
            prefix=f"{seam_prefix}/proposals",
            dependencies=proposal_routes.SEAM_DEPENDENCIES,
        )
    # Swagger UI's Authorize button: the key's schemes, on every route that needs one.
    declare_api_key(app)
    # The MCP server (api/mcp/): the same store calls as the routes above.
    app.router.routes.append(mcp_route)
    # Probes and scrapers carry no API key (runtime/health.py).
    app.router.routes.extend(health_routes(probed(api.probe), api.metrics))
    app.mount("/codec", codec_app(api, app.state.key_cache))
    # In front of the router, inside every middleware and exception handler: the
    # session-start read of one entry, without FastAPI's routing and dependency cost.
    app.router.middleware_stack = FastEntryReads(
        app.router.middleware_stack, api, app.state.key_cache
    )
    app.add_middleware(BodyLimit, limit=max_body_bytes)
    # A request's major is settled before anything answers it.
    app.add_middleware(WireVersion)
    # Outermost: a request's time covers every middleware and error handler.
    meter = api.metrics.meter if api.metrics else MetricMeter.noop
    app.add_middleware(RequestMetrics, meter=meter)
    # When the process traces (runtime/tracing.py): the HTTP span around all of it.
    instrument_app(app)
    return app
