"""HTTP latency by route template, method and status
(``agent_memory_http_request_duration_seconds``, runtime/product_metrics.py).

Pure ASGI and outermost, so the time covers every middleware, the body limit and error
handlers. The route is the template the router matched (``/api/v1/memory/{entry_id}``),
never the path a client sent: ids in paths would give every entry its own series, and a
path can carry what a client wrote. A request no route matched is ``unmatched``.
"""

from __future__ import annotations

import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send
from temporalio.common import MetricMeter

from runtime.product_metrics import HTTP_DURATION

# Set by a middleware that answers before routing (api/fast_reads.py).
ROUTE_TEMPLATE = "agent_memory.route"
UNMATCHED = "unmatched"


def route_template(scope: Scope) -> str:
    answered_by = scope.get(ROUTE_TEMPLATE)
    if answered_by is not None:
        return str(answered_by)
    root = scope.get("root_path", "")
    path = getattr(scope.get("route"), "path", None)
    if path is None:
        # A mount matched (the docs' static assets, or a mounted app none of whose routes
        # did): FastAPI's router does not leave its route in the scope.
        return f"{root}/{{path}}" if root else UNMATCHED
    # A mounted app's route (the codec server under /codec) matches below its mount.
    return f"{root}{path}"


class RequestMetrics:
    def __init__(self, app: ASGIApp, meter: MetricMeter) -> None:
        self.app = app
        # Built once: every request records into it.
        self.durations = meter.create_histogram_float(*HTTP_DURATION, "s")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500  # what the server answers when the app raises before a response

        async def send_with_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_with_status)
        finally:
            self.durations.record(
                time.perf_counter() - started,
                {"route": route_template(scope), "method": scope["method"], "status": str(status)},
            )
