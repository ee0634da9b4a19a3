"""Connecting to Temporal the one way client, worker and CLI all agree on."""

from __future__ import annotations

import asyncio
import logging

from temporalio.client import Client
from temporalio.runtime import Runtime

from runtime.converter import data_converter_for
from runtime.settings import Settings
from runtime.tracing import temporal_interceptors


async def connect(
    settings: Settings | None = None, *, lazy: bool = False, runtime: Runtime | None = None
) -> Client:
    """``lazy``: connect on first use (a service that must start while Temporal is down,
    such as the HTTP API, which then reports Temporal unavailable instead of failing).
    ``runtime``: the process's metrics runtime (runtime/metrics.py), else the SDK's."""
    settings = settings or Settings()
    return await Client.connect(
        settings.temporal_address,
        namespace=settings.temporal_namespace,
        # Workflow inputs are pydantic models with camelCase aliases, so JSON from the
        # Temporal CLI (`--input '{"memoryRef": ...}'`) decodes into them directly. With
        # a payload keys file, payloads are encrypted (runtime/payload_codec.py).
        data_converter=data_converter_for(settings),
        lazy=lazy,
        runtime=runtime,
        # Tracing, when this process started it (runtime/tracing.py).
        interceptors=temporal_interceptors(),
    )


async def connect_when_ready(
    settings: Settings, *, seconds: float = 300, runtime: Runtime | None = None
) -> Client:
    """``connect``, waiting for a Temporal server that is starting or restarting (a
    worker started beside it, a failover) instead of exiting on the first refusal. The
    CLI does not wait: it fails within seconds, naming the address."""
    log = logging.getLogger("agent_memory.temporal")
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    delay = 0.25
    while True:
        try:
            return await connect(settings, runtime=runtime)
        except Exception as error:  # the SDK raises RuntimeError for a refused connect
            if loop.time() + delay > deadline:
                raise
            log.warning(
                "Temporal not reachable (%s); retrying in %.1f s", type(error).__name__, delay
            )
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5.0)
