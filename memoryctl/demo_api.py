"""The quick start's HTTP part: the API over the demo's store and Temporal, one API key
for the demo tenant (kept in the state dir, mode 0600, reused across runs), a check
through real HTTP, and the curl lines a user runs next."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx
from rich.console import Console
from temporalio.client import Client

from api.app import create_app
from api.serve import uvicorn_server
from api.services import ApiServices
from memory.api_keys import ApiKeyStore
from memory.store import PostgresMemoryStore
from memory.vault import SecretVault
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
        if await keys.authenticate(key) == tenant:
            return path, key
    created = await keys.create(tenant, name="quick start")
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        handle.write(created.key + "\n")
    return path, created.key


@contextlib.asynccontextmanager
async def serving_api(
    settings: Settings,
    store: PostgresMemoryStore,
    client: Client,
    vault: SecretVault,
    state_dir: Path,
    tenant: str,
) -> AsyncIterator[DemoApi]:
    async def temporal() -> Client:
        return client

    services = ApiServices.build(settings, store.engine, vault, temporal, store=store)
    key_file, key = await demo_key(services.keys, state_dir, tenant)
    server = uvicorn_server(create_app(services), settings.api_host, settings.api_port)
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()  # the port was taken: uvicorn's error is raised here
            raise RuntimeError(f"the API could not listen on port {settings.api_port}")
        await asyncio.sleep(0.05)
    try:
        yield DemoApi(f"http://{settings.api_host}:{settings.api_port}", key_file, key)
    finally:
        server.should_exit = True
        await task


async def check_and_show(api: DemoApi, memory_ref: str, console: Console) -> None:
    """One public and one authenticated request over HTTP, then the curl lines."""
    agent = parse_memory_ref(memory_ref).agent
    async with httpx.AsyncClient(base_url=api.url, timeout=30) as http:
        discovery = (await http.get("/.well-known/openwop")).raise_for_status().json()
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
    key_path = shlex.quote(str(api.key_file))
    console.print(
        "Try it (the key for tenant 'acme' is in the state dir; more in docs/http-api.md):",
        markup=False,
    )
    for line in (
        f"export AGENT_MEMORY_API={api.url} AGENT_MEMORY_KEY=$(cat {key_path})",
        'curl -sf "$AGENT_MEMORY_API/.well-known/openwop"',
        f'curl -sf "$AGENT_MEMORY_API/api/v1/agents/{agent}/memory?limit=3" '
        '-H "X-API-Key: $AGENT_MEMORY_KEY"',
    ):
        console.print(f"  {line}", soft_wrap=True, markup=False, highlight=False)
