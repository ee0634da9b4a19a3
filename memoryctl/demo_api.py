"""The quick start's HTTP part: the API over the demo's store and Temporal, one API key
for the demo tenant (kept in the state dir, mode 0600, reused across runs), a check
through real HTTP, and the curl lines a user runs next."""

from __future__ import annotations

import contextlib
import shlex
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx
from rich.console import Console
from temporalio.client import Client

from api.app import create_app
from api.services import ApiServices
from memory.redaction.vault import SecretVault
from memory.store import PostgresMemoryStore
from memory.tenants.api_keys import ApiKeyStore
from memoryctl.keys import write_key_file
from runtime.http_serving import serving
from runtime.metrics import MetricsExporter
from runtime.settings import Settings
from schemas.memory_ref import parse_memory_ref

KEY_FILE = "api-key"


@dataclass(frozen=True)
class DemoApi:
    url: str
    key_file: Path
    key: str


async def demo_key(keys: ApiKeyStore, state_dir: Path, tenant: str) -> tuple[Path, str]:
    """The demo tenant's key from the state dir while it still authenticates, else a new
    one written there readable by the user only."""
    path = state_dir / KEY_FILE
    if path.exists():
        key = path.read_text().strip()
        identity = await keys.authenticate(key)
        if identity is not None and identity.tenant == tenant:
            return path, key
    created = await keys.create(tenant, name="quick start")
    write_key_file(path, created.key)
    return path, created.key


@contextlib.asynccontextmanager
async def serving_api(
    settings: Settings,
    store: PostgresMemoryStore,
    client: Client,
    vault: SecretVault,
    state_dir: Path,
    tenant: str,
    metrics: MetricsExporter | None = None,
) -> AsyncIterator[DemoApi]:
    async def temporal() -> Client:
        return client

    services = ApiServices.build(
        settings, store.engine, vault, temporal, store=store, metrics=metrics
    )
    key_file, key = await demo_key(services.keys, state_dir, tenant)
    app = create_app(services)
    async with serving(app, settings.api_host, settings.api_port, setting="--api-port"):
        yield DemoApi(f"http://{settings.api_host}:{settings.api_port}", key_file, key)


async def check_and_show(api: DemoApi, memory_ref: str, console: Console) -> None:
    """One public and one authenticated request over HTTP, then the curl lines."""
    agent = parse_memory_ref(memory_ref).agent
    async with httpx.AsyncClient(base_url=api.url, timeout=30) as http:
        discovery = (await http.get("/.well-known/openwop")).raise_for_status().json()
        ready = (await http.get("/readyz")).raise_for_status().json()
        metrics = (await http.get("/metrics")).raise_for_status().text
        listed = (
            (
                await http.get(
                    f"/api/v1/agents/{agent}/memory",
                    params={"limit": 1000},
                    headers={"X-API-Key": api.key},
                )
            )
            .raise_for_status()
            .json()
        )
    dimensions = discovery["memoryDimensions"]
    console.print(
        f"HTTP API at {api.url} (OpenAPI at {api.url}/docs): discovery reports "
        f"{sum(dimensions.values())}/{len(dimensions)} memory dimensions available; "
        f"{len(listed)} entries of {memory_ref} listed with the demo key",
        soft_wrap=True,
        markup=False,
    )
    series = sorted({line.split("{")[0] for line in metrics.splitlines() if line[:1].isalpha()})
    console.print(
        f"Health: {api.url}/readyz says {ready['status']}; {api.url}/metrics exports "
        f"{sum(name.startswith('agent_memory_') for name in series)} product and "
        f"{sum(name.startswith('temporal_') for name in series)} Temporal SDK series "
        "(docs/operations.md#health-readiness-metrics-and-traces)",
        soft_wrap=True,
        markup=False,
    )
    key_path = shlex.quote(str(api.key_file))
    console.print(
        "Try it (the key for tenant 'acme' is in the state dir; more in docs/http-api.md):",
        markup=False,
    )
    for line in (
        f"export AGENT_MEMORY_API={api.url} AGENT_MEMORY_KEY=$(cat {key_path})",
        'curl -sf "$AGENT_MEMORY_API/.well-known/openwop"',
        'curl -sf "$AGENT_MEMORY_API/metrics" | grep "^agent_memory_dreams"',
        f'curl -sf "$AGENT_MEMORY_API/api/v1/agents/{agent}/memory?limit=3" '
        '-H "X-API-Key: $AGENT_MEMORY_KEY"',
    ):
        console.print(f"  {line}", soft_wrap=True, markup=False, highlight=False)
