"""What every route uses, built once per process: the store, the key and manifest
stores, the secrets vault, the Temporal client and the live-state probe."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from fastapi import Request
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client

from api.secrets_cache import TenantRegistries
from memory.redaction.vault import SecretVault
from memory.store import PostgresMemoryStore
from memory.tenants.agent_manifests import AgentManifestStore, KnownAgent
from memory.tenants.api_keys import ApiKeyStore
from runtime.intent_link_keys import intent_links_for
from runtime.metrics import MetricsExporter
from runtime.probe import HostProbe
from runtime.settings import Settings


@dataclass
class ApiServices:
    settings: Settings
    engine: AsyncEngine
    store: PostgresMemoryStore
    keys: ApiKeyStore
    manifests: AgentManifestStore
    vault: SecretVault
    probe: HostProbe
    temporal: Callable[[], Awaitable[Client]]
    registries: TenantRegistries
    # Each tenant's last inventory read, served while the database is away.
    last_inventory: dict[str, list[KnownAgent]] = field(default_factory=dict)
    # The process's metrics (its Temporal client runs on this runtime); None: /metrics
    # answers 404 and nothing is recorded.
    metrics: MetricsExporter | None = None

    @classmethod
    def build(
        cls,
        settings: Settings,
        engine: AsyncEngine,
        vault: SecretVault,
        temporal: Callable[[], Awaitable[Client]],
        store: PostgresMemoryStore | None = None,
        metrics: MetricsExporter | None = None,
    ) -> ApiServices:
        store = store or PostgresMemoryStore(engine, intent_links=intent_links_for(settings))
        return cls(
            settings=settings,
            engine=engine,
            store=store,
            keys=ApiKeyStore(engine),
            manifests=AgentManifestStore(engine),
            vault=vault,
            probe=HostProbe(
                store,
                temporal,
                namespace=settings.temporal_namespace,
                task_queue=settings.task_queue,
            ),
            temporal=temporal,
            registries=TenantRegistries(vault),
            metrics=metrics,
        )


def once(connect: Callable[[], Awaitable[Client]]) -> Callable[[], Awaitable[Client]]:
    """A lazily connected client, made on first use and kept (the SDK reconnects)."""
    client: Client | None = None

    async def get() -> Client:
        nonlocal client
        if client is None:
            client = await connect()
        return client

    return get


async def services(request: Request) -> ApiServices:
    # async on purpose: FastAPI runs a plain ``def`` dependency in its thread pool, a
    # thread hop on every request for a dictionary read.
    found: ApiServices = request.app.state.services
    return found
