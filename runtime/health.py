"""``/healthz``, ``/readyz`` and ``/metrics``, answered the same way by the API and by
the worker's endpoint (worker.py, ``AGENT_MEMORY_WORKER_HTTP_ADDRESS``).

- ``/healthz``: the process is alive (its event loop answers). Always 200: a restart is
  the remedy only for a process that cannot answer at all.
- ``/readyz``: the process can do its work now. The API needs the database and Temporal
  (runtime/probe.py, the same probe discovery reports) and reports, without requiring
  it, whether a worker polls its task queue; the worker needs the database, Temporal and
  its own worker polling. 200 when every required check passes, 503 otherwise, with each
  check's state and a detail that names a cause (an exception's class, never its
  message: a driver's message can quote a URL).
- ``/metrics``: every series of the process in Prometheus text (runtime/metrics.py).

None of them needs an API key: probes and scrapers carry none, and they reveal no
tenant, memoryRef or content.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from runtime.metrics import PROMETHEUS_CONTENT_TYPE, MetricsExporter
from runtime.probe import HostProbe, LiveState


def readiness(state: LiveState, polling: bool | None = None) -> tuple[bool, dict[str, Any]]:
    """``polling``: whether this process's own worker polls (the worker's endpoint, where
    it gates readiness); None reports whether any worker polls the queue (the API, where
    it does not gate: reads and writes need no worker, and a load balancer that took
    every API replica out because the worker is down would stop them too)."""
    if polling is None:
        worker = {"ok": state.worker, "required": False, "detail": state.worker_detail}
    else:
        detail = "this worker is polling" if polling else "this worker is not polling"
        worker = {"ok": polling, "required": True, "detail": detail}
    checks = {
        "database": {"ok": state.database, "required": True, "detail": state.database_detail},
        "temporal": {"ok": state.temporal, "required": True, "detail": state.temporal_detail},
        "worker": worker,
    }
    ready = all(check["ok"] for check in checks.values() if check["required"])
    return ready, {
        "status": "ready" if ready else "not-ready",
        "checks": checks,
        "checkedAt": state.checked_at.isoformat(),
    }


# A process's readiness now: whether it is ready, and the body /readyz answers with.
Readiness = Callable[[], Awaitable[tuple[bool, dict[str, Any]]]]


def probed(probe: HostProbe) -> Readiness:
    """The API's: the database, Temporal, and a worker polling the task queue."""

    async def ready() -> tuple[bool, dict[str, Any]]:
        return readiness(await probe.state())

    return ready


class WorkerReadiness:
    """The worker's: set by worker.py as it connects and starts polling, so the endpoint
    answers from the process's first moment (503 while it starts or restarts)."""

    def __init__(self) -> None:
        self.probe: HostProbe | None = None
        self.polling = False

    async def __call__(self) -> tuple[bool, dict[str, Any]]:
        if self.probe is None:
            starting = "starting: not connected to Temporal and the database yet"
            check = {"ok": False, "required": True, "detail": starting}
            return False, {"status": "not-ready", "checks": {"worker": check}}
        return readiness(await self.probe.state(), self.polling)


def health_routes(ready: Readiness, metrics: MetricsExporter | None) -> list[Route]:
    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "alive"})

    async def readyz(request: Request) -> Response:
        is_ready, body = await ready()
        return JSONResponse(body, status_code=200 if is_ready else 503)

    async def metrics_text(request: Request) -> Response:
        if metrics is None:
            return JSONResponse(
                {"error": "not_found", "message": "this process exports no metrics"},
                status_code=404,
            )
        return Response(await metrics.exposition(), media_type=PROMETHEUS_CONTENT_TYPE)

    return [
        Route("/healthz", healthz, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
        Route("/metrics", metrics_text, methods=["GET"]),
    ]
