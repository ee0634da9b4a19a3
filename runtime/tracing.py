"""OpenTelemetry tracing, configured by the standard OTEL_* variables and off when they
are unset (docs/operations.md#tracing).

One trace follows a request across processes: the API's FastAPI instrumentation opens
the HTTP span, Temporal's own TracingInterceptor (temporalio.contrib.opentelemetry)
carries the context in workflow and activity headers to the worker, and the asyncpg
instrumentation adds a span per SQL statement under the activity that ran it. Statement
spans carry the SQL text with its placeholders ($1, $2), never the bound values, so no
memory content reaches a span; span names are workflow, activity and route names.

``start_tracing`` runs once per process (worker.py, ``memoryctl serve``, the quick
start) before its Temporal client connects: ``temporal_interceptors()`` is empty until
then, so tests and the CLI trace nothing and pay nothing.
"""

from __future__ import annotations

import os
from typing import Any

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.instrumentation.asyncpg import AsyncPGInstrumentor
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from temporalio.client import Interceptor
from temporalio.contrib.opentelemetry import TracingInterceptor

# Any of these turns tracing on (the OTLP exporter reads them itself). docker-compose's
# worker and api pass the first (empty unless .env sets it).
ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
COMPOSE_TRACING_VARIABLE = ENDPOINT_VARIABLES[0]

_provider: TracerProvider | None = None


def tracing_requested(environ: os._Environ[str] | dict[str, str] = os.environ) -> bool:
    """An OTLP endpoint is set, and neither the SDK nor the traces exporter is off."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    if environ.get("OTEL_TRACES_EXPORTER", "otlp").strip().lower() == "none":
        return False
    return any(environ.get(name, "").strip() for name in ENDPOINT_VARIABLES)


def start_tracing(default_service_name: str) -> bool:
    """Export this process's spans over OTLP/HTTP when the environment asks for it.
    ``OTEL_SERVICE_NAME`` overrides the name. Returns whether tracing is on."""
    global _provider
    if _provider is not None:
        return True
    if not tracing_requested():
        return False
    name = os.environ.get("OTEL_SERVICE_NAME", "").strip() or default_service_name
    provider = TracerProvider(resource=Resource.create({SERVICE_NAME: name}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    AsyncPGInstrumentor().instrument(tracer_provider=provider)
    _provider = provider
    return True


def tracing_enabled() -> bool:
    return _provider is not None


def temporal_interceptors() -> list[Interceptor]:
    """For every Temporal client of the process; a worker built on the client inherits
    them, so its workflows and activities continue the caller's trace."""
    return [TracingInterceptor()] if _provider is not None else []


def instrument_app(app: Any) -> None:
    """The HTTP span of every API request (routes named by their template)."""
    if _provider is None:
        return
    from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor

    # Probes and scrapes every few seconds would bury the traces that matter.
    FastAPIInstrumentor.instrument_app(
        app, tracer_provider=_provider, excluded_urls="healthz,readyz,metrics"
    )


def stop_tracing() -> None:
    """Export what is buffered (the batch processor sends every few seconds)."""
    global _provider
    if _provider is not None:
        _provider.shutdown()
        _provider = None
