"""Connecting to Temporal the one way client, worker and CLI all agree on."""

from __future__ import annotations

from temporalio.client import Client

from runtime.converter import data_converter_for
from runtime.settings import Settings


async def connect(settings: Settings | None = None, *, lazy: bool = False) -> Client:
    """``lazy``: connect on first use (a service that must start while Temporal is down,
    such as the HTTP API, which then reports Temporal unavailable instead of failing)."""
    settings = settings or Settings()
    return await Client.connect(
        settings.temporal_address,
        namespace=settings.temporal_namespace,
        # Workflow inputs are pydantic models with camelCase aliases, so JSON from the
        # Temporal CLI (`--input '{"memoryRef": ...}'`) decodes into them directly. With
        # a payload keys file, payloads are encrypted (runtime/payload_codec.py).
        data_converter=data_converter_for(settings),
        lazy=lazy,
    )
