"""The real HTTP app on a loopback port (uvicorn in this test's event loop), over the
test's own store, the dev server and a worker on the test's task queue."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpx
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client

from api.services import ApiServices
from memory.redaction.vault import SecretVault
from memory.store import PostgresMemoryStore
from memory.tenants.api_keys import ApiKeyStore
from runtime.http_serving import serving as listening
from runtime.settings import Settings


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.asynccontextmanager
async def serving(app: FastAPI) -> AsyncIterator[str]:
    """The app on a free loopback port; yields its base URL."""
    port = free_port()
    async with listening(app, "127.0.0.1", port, setting="the test's API"):
        yield f"http://127.0.0.1:{port}"


@dataclass
class RunningApi:
    url: str
    services: ApiServices
    keys: ApiKeyStore

    async def key_for(self, tenant: str) -> str:
        return (await self.keys.create(tenant, name="test")).key

    async def client_for(self, tenant: str) -> httpx.AsyncClient:
        key = await self.key_for(tenant)
        return httpx.AsyncClient(base_url=self.url, headers={"X-API-Key": key}, timeout=60)


def api_services(
    engine: AsyncEngine,
    store: PostgresMemoryStore,
    client: Client,
    task_queue: str,
    vault: SecretVault,
    **settings_values: object,
) -> ApiServices:
    """``settings_values``: more settings by their environment names."""

    async def temporal() -> Client:
        return client

    values = {
        "AGENT_MEMORY_TASK_QUEUE": task_queue,
        "OPENWOP_TEST_SEAM_ENABLED": True,
        **settings_values,
    }
    settings = Settings.model_validate(values)
    return ApiServices.build(settings, engine, vault, temporal, store=store)
