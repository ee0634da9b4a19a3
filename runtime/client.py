"""Connecting to Temporal the one way client, worker and CLI all agree on."""

from __future__ import annotations

from temporalio.client import Client

from runtime.converter import data_converter
from runtime.settings import Settings


async def connect(settings: Settings | None = None) -> Client:
    settings = settings or Settings()
    return await Client.connect(
        settings.temporal_address,
        namespace=settings.temporal_namespace,
        # Workflow inputs are pydantic models with camelCase aliases, so JSON from the
        # Temporal CLI (`--input '{"memoryRef": ...}'`) decodes into them directly.
        data_converter=data_converter,
    )
