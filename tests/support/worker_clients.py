"""Clients of their own for workers started in a test: each with its identity, so a
history's ActivityTaskStarted events say which worker ran what (like two containers of
the compose `worker` service)."""

from __future__ import annotations

from collections.abc import Sequence

from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment


async def clients_with_identities(
    temporal_env: WorkflowEnvironment, identities: Sequence[str]
) -> list[Client]:
    shared = temporal_env.client
    return [
        await Client.connect(
            shared.service_client.config.target_host,
            namespace=shared.namespace,
            data_converter=shared.data_converter,
            identity=identity,
        )
        for identity in identities
    ]
