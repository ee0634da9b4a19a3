"""An OTLP/HTTP trace receiver on loopback (what a collector or Jaeger would be): it
decodes every export into flat span records a test can query."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from runtime.http_serving import serving
from tests.support.http_app import free_port


@dataclass(frozen=True)
class ReceivedSpan:
    service: str
    name: str
    trace_id: str
    span_id: str
    parent_id: str
    attributes: dict[str, str]


@dataclass
class OtlpReceiver:
    endpoint: str
    spans: list[ReceivedSpan] = field(default_factory=list)

    def in_trace(self, trace_id: str) -> list[ReceivedSpan]:
        return [span for span in self.spans if span.trace_id == trace_id]

    def ancestors(self, span: ReceivedSpan) -> list[ReceivedSpan]:
        by_id = {s.span_id: s for s in self.in_trace(span.trace_id)}
        found = []
        while span.parent_id in by_id:
            span = by_id[span.parent_id]
            found.append(span)
        return found


def _decode(body: bytes) -> list[ReceivedSpan]:
    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    spans = []
    for resource_spans in request.resource_spans:
        resource = {a.key: a.value.string_value for a in resource_spans.resource.attributes}
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                spans.append(
                    ReceivedSpan(
                        service=resource.get("service.name", ""),
                        name=span.name,
                        trace_id=span.trace_id.hex(),
                        span_id=span.span_id.hex(),
                        parent_id=span.parent_span_id.hex(),
                        attributes={a.key: str(a.value) for a in span.attributes},
                    )
                )
    return spans


@contextlib.asynccontextmanager
async def otlp_receiver() -> AsyncIterator[OtlpReceiver]:
    port = free_port()
    receiver = OtlpReceiver(endpoint=f"http://127.0.0.1:{port}")

    async def traces(request: Request) -> Response:
        receiver.spans.extend(_decode(await request.body()))
        return Response(
            ExportTraceServiceResponse().SerializeToString(),
            media_type="application/x-protobuf",
        )

    app = Starlette(routes=[Route("/v1/traces", traces, methods=["POST"])])
    async with serving(app, "127.0.0.1", port, setting="the test's OTLP receiver"):
        yield receiver
