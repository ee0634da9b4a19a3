"""Running the API as a process (``memoryctl serve``, the quick start, docker-compose):
services from the same settings the worker reads, then uvicorn.

The API starts even when the database or Temporal is down: discovery and the inventory
then say what is unavailable, and requests that need it get a 503.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator

from api.app import create_app
from api.services import ApiServices, once
from memory.indexes.vector_index import prepare_vectors
from memory.redaction.vault import vault_from_settings
from memory.storage.engines import create_engine, database_url_from_env, migrate
from runtime.client import connect
from runtime.converter import payload_codec_for
from runtime.http_serving import uvicorn_server
from runtime.log_format import configure_logging
from runtime.metrics import MetricsExporter
from runtime.settings import Settings
from runtime.tracing import start_tracing, stop_tracing

log = logging.getLogger("agent_memory.api")


@contextlib.asynccontextmanager
async def open_services(settings: Settings) -> AsyncIterator[ApiServices]:
    # A malformed payload keys file stops the API here, naming the field, rather than
    # failing its first workflow start or codec request.
    payload_codec_for(settings)
    engine = create_engine(settings.database_url or database_url_from_env())
    metrics = MetricsExporter.start(process="api")
    try:
        services = ApiServices.build(
            settings,
            engine,
            vault_from_settings(settings.secrets_file),
            once(lambda: connect(settings, lazy=True, runtime=metrics.runtime)),
            metrics=metrics,
        )
        try:
            await migrate(engine)
            await prepare_vectors(engine, services.store.vectors.model)
        except Exception as error:  # reported by discovery; requests get 503s
            log.warning("database not migrated at start: %s", type(error).__name__)
        yield services
    finally:
        await engine.dispose()


async def serve(settings: Settings) -> None:
    configure_logging(settings.log_format)
    start_tracing("agent-memory-api")
    try:
        async with open_services(settings) as services:
            server = uvicorn_server(create_app(services), settings.api_host, settings.api_port)
            await server.serve()
    finally:
        stop_tracing()
